#include "device/wqe_reader.h"

#include <cstring>

namespace mana::emu {

namespace {

constexpr uint32_t kIbvAccessLocalWrite = 1;

}  // namespace

bool read_wqe(const WorkQueue& q, WqeView* out) {
  const uint32_t mask = q.size - 1;
  const uint32_t offset = (q.consumed_bu * hw::kBasicUnit) & mask;
  hw::WqeHeader header;
  std::memcpy(&header, q.ring + offset, sizeof(header));
  out->offset_bu = q.consumed_bu;
  out->num_sge = header.num_sge();
  out->oob_bytes = header.oob_bytes();
  out->size_bu = hw::wqe_size_bu(out->oob_bytes, out->num_sge);
  out->oob = q.ring + offset + hw::kDmaOobSize;
  return out->size_bu <= q.pending_bu() && out->size_bu <= q.size_bu();
}

void read_sgl(const WorkQueue& q, const WqeView& w, hw::Sge* out, uint32_t n) {
  const uint32_t mask = q.size - 1;
  uint32_t pos = (w.offset_bu * hw::kBasicUnit + hw::kDmaOobSize + w.oob_bytes) & mask;
  if (pos + n * hw::kSgeSize <= q.size) {  // the common case: no wrap, fixed-size copies
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

SglStatus check_sgl(const MrTable& mrs, uint32_t pd_id, const hw::Sge* sges, uint32_t num_sge,
                    bool write, bool keys_invalid) {
  if (num_sge == 0) {
    const hw::Sge& s = sges[0];
    const bool dummy = s.address == hw::kDummySge.address && s.mem_key == hw::kDummySge.mem_key &&
                       s.size == hw::kDummySge.size;
    return dummy ? SglStatus::kOk : SglStatus::kBadDummy;
  }
  for (uint32_t i = 0; i < num_sge; ++i) {
    const hw::Sge& s = sges[i];
    const Mr* mr = keys_invalid ? nullptr : mrs.find(s.mem_key);
    if (mr == nullptr || mr->pd_id != pd_id) return SglStatus::kBadKey;
    if (s.address < mr->addr || s.size > mr->len || s.address - mr->addr > mr->len - s.size)
      return SglStatus::kOutOfRange;
    if (write && !(mr->access & kIbvAccessLocalWrite)) return SglStatus::kNoWrite;
  }
  return SglStatus::kOk;
}

}  // namespace mana::emu
