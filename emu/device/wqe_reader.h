// Reading a WQE from an SQ/RQ ring (spec §4.1, §4.2) and checking its SGL against the registered
// memory (spec §6.4), shared by the TX and RX paths. Nothing here touches memory outside the ring
// or a live MR.
#pragma once

#include <cstdint>

#include "device/objects.h"
#include "device/tagged_table.h"

namespace mana::emu {

using MrTable = TaggedTable<Mr>;

struct WqeView {
  uint32_t offset_bu = 0;  // BU position of the WQE (27-bit)
  uint32_t num_sge = 0;
  uint32_t oob_bytes = 0;
  uint32_t size_bu = 0;
  const uint8_t* oob = nullptr;  // inside the ring: header and OOB never wrap
};

// Reads the header at the queue's consumed position. False when the WQE's size (from its header)
// exceeds the ring or the work the doorbell announced.
bool read_wqe(const WorkQueue& q, WqeView* out);

// Copies `n` SGEs that follow the OOB (wrapping at the end of the ring).
void read_sgl(const WorkQueue& q, const WqeView& w, hw::Sge* out, uint32_t n);

enum class SglStatus { kOk, kBadDummy, kBadKey, kOutOfRange, kNoWrite };

// Checks every SGE: live lkey of the queue's PD, inside its MR, LOCAL_WRITE when `write`.
// `num_sge == 0` requires the single dummy SGE {1, 0, 0} (passed as sges[0]). `keys_invalid`
// treats every lkey as invalid (an injected fault).
SglStatus check_sgl(const MrTable& mrs, uint32_t pd_id, const hw::Sge* sges, uint32_t num_sge,
                    bool write, bool keys_invalid);

inline uint64_t sgl_bytes(const hw::Sge* sges, uint32_t n) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) total += sges[i].size;
  return total;
}

}  // namespace mana::emu
