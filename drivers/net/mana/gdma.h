// SPDX-License-Identifier: BSD-3-Clause
// GDMA queue helpers of the data path (doc/hardware.md §4.1, §4.5, §4.8, §7): the WQE writer with
// SGL wrap-around, CQ polling with the owner-bit protocol and doorbell stores. Header-only so that
// the burst functions inline them; no division: ring sizes are powers of two.
#pragma once

#include <cstdint>
#include <cstring>

#include <rte_atomic.h>
#include <rte_io.h>

#include "mana/gdma_format.h"

namespace mana {

// An SQ or RQ as its producer sees it. Positions are free-running counters in basic units.
struct WorkQueue {
  uint8_t* ring = nullptr;
  uint32_t size_mask = 0;    // ring bytes - 1 (ring bytes: a power of two >= 4096)
  uint32_t capacity_bu = 0;  // basic units that may be outstanding at once
  uint32_t head_bu = 0;      // next free basic unit (producer)
  uint32_t tail_bu = 0;      // first basic unit not known complete
  uint32_t id = 0;
};

inline uint32_t wq_free_bu(const WorkQueue& q) { return q.capacity_bu - (q.head_bu - q.tail_bu); }

// Writes one WQE at the queue's head and advances the head. `oob` holds `oob_size` (8 or 24) bytes
// of client OOB; `sgl` has `num_sge` entries (an empty SGL writes the dummy SGE of doc/hardware.md
// §4.2). The caller has checked the free space. Returns the client OOB's address in the ring (the
// OOB never wraps) so that a caller may still patch it before ringing the doorbell.
// `header` is the WQE header of those sizes (a TSO WQE's carries more, doc/hardware.md §4.11).
inline uint8_t* post_wqe(WorkQueue& q, hw::WqeHeader header, const void* oob, uint32_t oob_size,
                         const hw::Sge* sgl, uint32_t num_sge) {
  const uint32_t start = (q.head_bu * hw::kBasicUnit) & q.size_mask;
  uint8_t* wqe = q.ring + start;
  std::memcpy(wqe, &header, sizeof(header));
  uint8_t* client_oob = wqe + sizeof(header);
  std::memcpy(client_oob, oob, oob_size);

  // SGEs are 16-byte aligned in a ring of 32-byte units: one never straddles the end.
  uint32_t off = (start + hw::kDmaOobSize + oob_size) & q.size_mask;
  if (num_sge == 0) {
    std::memcpy(q.ring + off, &hw::kDummySge, sizeof(hw::Sge));
  } else {
    for (uint32_t i = 0; i < num_sge; i++) {
      std::memcpy(q.ring + off, &sgl[i], sizeof(hw::Sge));
      off = (off + hw::kSgeSize) & q.size_mask;
    }
  }
  q.head_bu += hw::wqe_size_bu(oob_size, num_sge);
  return client_oob;
}
inline uint8_t* post_wqe(WorkQueue& q, const void* oob, uint32_t oob_size, const hw::Sge* sgl,
                         uint32_t num_sge) {
  return post_wqe(q, hw::WqeHeader::make(num_sge, oob_size), oob, oob_size, sgl, num_sge);
}

// A CQ as its consumer sees it: `count` (a power of two) entries of 64 bytes.
struct CompletionQueue {
  hw::Cqe* ring = nullptr;
  uint32_t mask = 0;  // count - 1
  uint8_t log2_count = 0;
  uint32_t head = 0;  // free-running consumer index, starts at count (doc/hardware.md §4.5)
  uint32_t id = 0;
  uint32_t doorbell_head = 0;  // `head` when the last CQ doorbell was rung
};

// A CQ of `count` (a power of two) entries as the consumer starts it.
inline CompletionQueue make_completion_queue(hw::Cqe* ring, uint32_t count, uint32_t id) {
  const uint32_t head = hw::cq_initial_head(count);
  return CompletionQueue{ring, count - 1, static_cast<uint8_t>(__builtin_ctz(count)),
                         head, id,        head};
}

enum class CqPoll { kEmpty, kValid, kOverflow };

// Looks at the next CQE. On kValid `*cqe` points into the ring and its data is safe to read (the
// owner bits were read first, then a read barrier). The caller consumes it with `cq.head++`.
inline CqPoll cq_peek(const CompletionQueue& cq, const hw::Cqe** cqe) {
  const hw::Cqe* e = &cq.ring[cq.head & cq.mask];
  const uint32_t last = reinterpret_cast<const volatile uint32_t*>(e->dw)[hw::Cqe::kOwnerDword];
  switch (hw::cqe_state(hw::Cqe::Owner::get(last), cq.head, cq.log2_count)) {
    case hw::CqeState::kEmpty:
      return CqPoll::kEmpty;
    case hw::CqeState::kOverflow:
      return CqPoll::kOverflow;
    case hw::CqeState::kValid:
      break;
  }
  rte_io_rmb();  // dmb oshld on arm64; x86 keeps loads in order (doc/hardware.md §4.12)
  *cqe = e;
  return CqPoll::kValid;
}

// Doorbells: all ring writes become visible before the single 64-bit store (doc/hardware.md §4.8).
inline void ring_doorbell(void* db_page, uint32_t offset, uint64_t value) {
  rte_wmb();
  rte_write64_relaxed(value, static_cast<uint8_t*>(db_page) + offset);
}
inline void ring_sq_doorbell(void* db_page, const WorkQueue& sq) {
  ring_doorbell(db_page, hw::kSqDoorbellOffset,
                hw::sq_doorbell(sq.id, sq.head_bu * hw::kBasicUnit));
}
inline void ring_rq_doorbell(void* db_page, const WorkQueue& rq) {
  ring_doorbell(db_page, hw::kRqDoorbellOffset,
                hw::rq_doorbell(rq.id, rq.head_bu * hw::kBasicUnit));
}

// The CQ doorbell carries the consumer index modulo count * 8 (the owner-bit space, doc/hardware.md
// §4.8).
inline void ring_cq_doorbell(void* db_page, CompletionQueue& cq, bool arm) {
  const uint32_t index_space = (cq.mask + 1) * (hw::kOwnerMask + 1);
  ring_doorbell(db_page, hw::kCqDoorbellOffset,
                hw::cq_doorbell(cq.id, cq.head & (index_space - 1), arm));
  cq.doorbell_head = cq.head;
}

// The NIC needs a CQ doorbell at least every 8 wraps of a CQ even when nobody arms it; like the
// Linux driver we ring one (unarmed) once 4 wraps' worth of CQEs were consumed since the last one
// (doc/hardware.md §4.8). Checked once per burst, so the cost is one compare per burst.
inline constexpr uint32_t kCqWrapsPerDoorbell = 4;
inline bool cq_doorbell_due(const CompletionQueue& cq) {
  return cq.head - cq.doorbell_head >= (cq.mask + 1) * kCqWrapsPerDoorbell;
}

constexpr bool is_pow2(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }
constexpr uint8_t log2_of_pow2(uint32_t v) { return static_cast<uint8_t>(__builtin_ctz(v)); }

}  // namespace mana
