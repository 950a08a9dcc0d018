// SPDX-License-Identifier: BSD-3-Clause
// Queue buffer sizes and user-space limits as rdma-core 44's libmana computes them (doc/hardware.md
// §3.2). Pure functions so that the rules are unit-tested apart from the LD_PRELOAD library.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana::emu::verbs {

constexpr uint32_t kCqeBytes = 64;
constexpr uint32_t kPageBytes = 4096;
// rdma-core 44..48 reject more than this many CQEs / WRs in user space (MAX_SEND_BUFFERS_PER_QUEUE,
// removed in v49 with the WQE-size checks: the kernel checks both).
constexpr uint32_t kRdmaCore44MaxEntries = 256;
constexpr uint32_t kMaxSqWqeBytes = 512;
constexpr uint32_t kMaxRqWqeBytes = 256;

constexpr uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

constexpr uint64_t next_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// DMA OOB (8) + small inline OOB (8) + 16 bytes per SGE, in 32-byte basic units.
constexpr uint32_t wqe_size(uint32_t sge) {
  return static_cast<uint32_t>(align_up(sge * 16ull + 16, 32));
}

// RC-44's hardware queue size: next power of two of the page-aligned size.
constexpr uint64_t hw_queue_size(uint64_t bytes) { return next_pow2(align_up(bytes, kPageBytes)); }

constexpr uint64_t cq_buffer_size(uint32_t cqe) {
  return align_up(next_pow2(uint64_t{cqe} * kCqeBytes), kPageBytes);
}
constexpr uint64_t sq_buffer_size(uint32_t max_send_wr, uint32_t max_send_sge) {
  return hw_queue_size(uint64_t{max_send_wr} * wqe_size(max_send_sge));
}
constexpr uint64_t rq_buffer_size(uint32_t max_wr, uint32_t max_sge) {
  return hw_queue_size(uint64_t{max_wr} * wqe_size(max_sge));
}

// The user-space checks of libmana (EINVAL) with `max_entries` CQEs / WRs (hw libmana-max-wr:
// 256 for rdma-core 44..48). 0 emulates rdma-core >= 49, which checks nothing itself: the kernel,
// i.e. the device model, checks against its own limits.
constexpr bool libmana_cq_ok(uint32_t cqe, uint32_t max_entries) {
  return max_entries == 0 || cqe <= max_entries;
}
constexpr bool libmana_sq_ok(uint32_t max_send_wr, uint32_t max_send_sge, uint32_t max_entries) {
  return max_entries == 0 ||
         (max_send_wr <= max_entries && wqe_size(max_send_sge) <= kMaxSqWqeBytes);
}
constexpr bool libmana_rq_ok(uint32_t max_wr, uint32_t max_sge, uint32_t max_entries) {
  return max_entries == 0 || (max_wr <= max_entries && wqe_size(max_sge) <= kMaxRqWqeBytes);
}

}  // namespace mana::emu::verbs
