// SPDX-License-Identifier: BSD-3-Clause
// Reading a WQE from an SQ/RQ ring (doc/hardware.md §4.1, §4.2) and checking its SGL against the
// registered memory (doc/hardware.md §6.4), shared by the TX and RX paths. Nothing here touches
// memory outside the ring or a live MR. Inline: this is the per-packet path of both directions.
#pragma once

#include <cstdint>
#include <cstring>

#include "device/objects.h"
#include "device/prefetch.h"
#include "device/tagged_table.h"

namespace mana::emu {

using MrTable = TaggedTable<Mr>;

inline constexpr uint32_t kIbvAccessLocalWrite = 1;

struct WqeView {
  uint32_t offset_bu = 0;  // BU position of the WQE (27-bit)
  uint32_t num_sge = 0;
  uint32_t oob_bytes = 0;
  uint32_t size_bu = 0;
  const uint8_t* oob = nullptr;  // inside the ring: header and OOB never wrap
  hw::WqeHeader header{};        // as read (TSO fields, doc/hardware.md §4.11)
};

// Reads the header at the queue's consumed position. False when the WQE's size (from its header)
// exceeds the ring or the work the doorbell announced.
inline bool read_wqe(const WorkQueue& q, WqeView* out) {
  const uint32_t offset = (q.consumed_bu * hw::kBasicUnit) & (q.size - 1);
  hw::WqeHeader header;
  std::memcpy(&header, q.ring + offset, sizeof(header));
  out->offset_bu = q.consumed_bu;
  out->header = header;
  out->num_sge = header.num_sge();
  out->oob_bytes = header.oob_bytes();
  out->size_bu = hw::wqe_size_bu(out->oob_bytes, out->num_sge);
  out->oob = q.ring + offset + hw::kDmaOobSize;
  return out->size_bu <= q.pending_bu() && out->size_bu <= q.size_bu();
}

// Copies `n` SGEs that follow the OOB (wrapping at the end of the ring).
inline void read_sgl(const WorkQueue& q, const WqeView& w, hw::Sge* out, uint32_t n) {
  const uint32_t mask = q.size - 1;
  uint32_t pos = (w.offset_bu * hw::kBasicUnit + hw::kDmaOobSize + w.oob_bytes) & mask;
  if (n == 1 && pos + hw::kSgeSize <= q.size) {  // the commonest: one SGE, no wrap
    std::memcpy(out, q.ring + pos, hw::kSgeSize);
    return;
  }
  if (pos + n * hw::kSgeSize <= q.size) {  // no wrap: fixed-size copies
    for (uint32_t i = 0; i < n; ++i)
      std::memcpy(&out[i], q.ring + pos + i * hw::kSgeSize, hw::kSgeSize);
    return;
  }
  auto* dst = reinterpret_cast<uint8_t*>(out);
  uint32_t left = n * hw::kSgeSize;
  while (left != 0) {
    const uint32_t chunk = left < q.size - pos ? left : q.size - pos;
    std::memcpy(dst, q.ring + pos, chunk);
    dst += chunk;
    left -= chunk;
    pos = (pos + chunk) & mask;
  }
}

// Prefetch hints for the WQEs after the one being processed (device/prefetch.h).
inline constexpr uint32_t kPrefetchAheadBu = 16;  // 8 cache lines of ring: 8 single-SGE WQEs

// The ring's cache line kPrefetchAheadBu past the consumed position, if the doorbell announced it
// (a line beyond may be one the driver is writing).
// always_inline: GCC 12 drops a conditional prefetch from a function it inlined on its own.
[[gnu::always_inline]] inline void prefetch_ring_ahead(const WorkQueue& q) {
  if (q.pending_bu() > kPrefetchAheadBu)
    __builtin_prefetch(q.ring +
                       (((q.consumed_bu + kPrefetchAheadBu) * hw::kBasicUnit) & (q.size - 1)));
}

// The first buffer of the WQE at `at_bu` (the one after the WQE being processed), if announced: for
// reading (TX) or writing (RX). Its address is read unchecked: a hint, not an access.
[[gnu::always_inline]] inline void prefetch_first_buffer(const WorkQueue& q, uint32_t at_bu,
                                                         bool write) {
  if (((at_bu - q.consumed_bu) & kBuMask) < q.pending_bu()) {
    const uint32_t offset = (at_bu * hw::kBasicUnit) & (q.size - 1);
    hw::WqeHeader header;
    std::memcpy(&header, q.ring + offset, sizeof(header));
    uint64_t address;
    // Rounded down to 8 bytes: a header the driver got wrong cannot make this read leave the ring.
    const uint32_t sge = (offset + hw::kDmaOobSize + header.oob_bytes()) & (q.size - 8);
    std::memcpy(&address, q.ring + sge, sizeof(address));
    if (write)
      prefetch_for_write(reinterpret_cast<const void*>(address));
    else
      __builtin_prefetch(reinterpret_cast<const void*>(address), 0);
  }
}

enum class SglStatus { kOk, kBadDummy, kBadKey, kOutOfRange, kNoWrite };

// The last MR an SGE named (consecutive WQEs name the same lkey), so that most SGEs skip the table
// lookup. Its owner resets it whenever an MR leaves the table, so its entry is always live.
struct MrCache {
  uint32_t lkey = 0;  // never a live lkey (TaggedTable ids are non-zero)
  const Mr* mr = nullptr;
  const Mr* find(const MrTable& mrs, uint32_t key) {
    if (key == lkey && mr != nullptr) return mr;
    const Mr* found = mrs.find(key);
    if (found != nullptr) {
      lkey = key;
      mr = found;
    }
    return found;
  }
};

// Checks every SGE: live lkey of the queue's PD, inside its MR, LOCAL_WRITE when `write`.
// `num_sge == 0` requires the single dummy SGE {1, 0, 0} (passed as sges[0]). `keys_invalid`
// treats every lkey as invalid (an injected fault). `cache`: MrCache over `mrs`. `*bytes` (when
// kOk): the SGEs' total size, summed in the same pass.
inline SglStatus check_sgl(const MrTable& mrs, MrCache& cache, uint32_t pd_id, const hw::Sge* sges,
                           uint32_t num_sge, bool write, bool keys_invalid, uint64_t* bytes) {
  *bytes = 0;
  if (num_sge == 0) {
    const hw::Sge& s = sges[0];
    const bool dummy = s.address == hw::kDummySge.address && s.mem_key == hw::kDummySge.mem_key &&
                       s.size == hw::kDummySge.size;
    return dummy ? SglStatus::kOk : SglStatus::kBadDummy;
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < num_sge; ++i) {
    const hw::Sge& s = sges[i];
    const Mr* mr = keys_invalid ? nullptr : cache.find(mrs, s.mem_key);
    if (mr == nullptr || mr->pd_id != pd_id) return SglStatus::kBadKey;
    // Inside [addr, addr + len): the offset is below len and the size fits after it.
    const uint64_t offset = s.address - mr->addr;
    if (s.address < mr->addr || offset > mr->len || s.size > mr->len - offset)
      return SglStatus::kOutOfRange;
    if (write && !(mr->access & kIbvAccessLocalWrite)) return SglStatus::kNoWrite;
    total += s.size;
  }
  *bytes = total;
  return SglStatus::kOk;
}

inline uint64_t sgl_bytes(const hw::Sge* sges, uint32_t n) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) total += sges[i].size;
  return total;
}

}  // namespace mana::emu
