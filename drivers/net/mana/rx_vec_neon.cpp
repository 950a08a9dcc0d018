// SPDX-License-Identifier: BSD-3-Clause
// The Neon RX kernel (rx_vec.h) of arm64, where Advanced SIMD is part of the base ISA: four CQEs
// per step, their first 32 bytes transposed into one register per field (type, flags, length,
// hash, the second packet's length), checked at once, then transposed back into each mbuf's
// packet_type .. hash.rss; rearm_data and ol_flags in one 16-byte store.
#include "rx_vec.h"

#if defined(__aarch64__)
#include <cstring>

#include <arm_neon.h>
#include <rte_byteorder.h>
#include <rte_mbuf_ptype.h>

namespace mana {
namespace {

inline uint32x4_t zip_lo64(uint32x4_t a, uint32x4_t b) {
  return vreinterpretq_u32_u64(vzip1q_u64(vreinterpretq_u64_u32(a), vreinterpretq_u64_u32(b)));
}
inline uint32x4_t zip_hi64(uint32x4_t a, uint32x4_t b) {
  return vreinterpretq_u32_u64(vzip2q_u64(vreinterpretq_u64_u32(a), vreinterpretq_u64_u32(b)));
}

// The EtherType of the frame the refill posted into `m` (rx_cqe.h rx_l3_ptype_of_frame), as on the
// wire.
inline uint32_t ethertype_of(const rte_mbuf* m) {
  uint16_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(m->buf_addr) + RTE_PKTMBUF_HEADROOM + 12, sizeof(v));
  return v;
}

inline void store_mbuf(rte_mbuf* m, uint64x2_t rearm, uint32x4_t fields) {
  auto* p = reinterpret_cast<uint8_t*>(m);
  vst1q_u64(reinterpret_cast<uint64_t*>(p + kRxRearmOffset), rearm);
  vst1q_u32(reinterpret_cast<uint32_t*>(p + kRxFieldsOffset), fields);
}

}  // namespace

template <bool kL3FromFrame>
RxVecTaken rx_vec_take_neon(const RxVecMeta& m, const hw::Cqe* cqe, rte_mbuf* const* slot,
                            rte_mbuf** out, unsigned n) {
  const uint32x4_t type_mask = vdupq_n_u32(0x3f);
  const uint32x4_t okay = vdupq_n_u32(hw::kCqeRxOkay);
  const uint32x4_t len_mask = vdupq_n_u32(0xffff);
  const uint32x4_t one = vdupq_n_u32(1);
  const uint32x4_t last = vdupq_n_u32(m.buf_len - 1);
  const uint32x4_t flags = vdupq_n_u32(m.dw1);
  const uint64x2_t rearm = vcombine_u64(vcreate_u64(m.rearm), vcreate_u64(m.ol_flags));
  const uint32x4_t ptype = vdupq_n_u32(m.ptype);
  const uint32x4_t tci = vdupq_n_u32(uint32_t{m.vlan_tci} << 16);
  uint32x4_t bytes = vdupq_n_u32(0);
  unsigned i = 0;
  for (; n - i >= 4; i += 4, cqe += 4) {
    const uint32x4_t a0 = vld1q_u32(cqe[0].dw), a1 = vld1q_u32(cqe[1].dw);
    const uint32x4_t a2 = vld1q_u32(cqe[2].dw), a3 = vld1q_u32(cqe[3].dw);
    const uint32x4_t b0 = vld1q_u32(cqe[0].dw + 4), b1 = vld1q_u32(cqe[1].dw + 4);
    const uint32x4_t b2 = vld1q_u32(cqe[2].dw + 4), b3 = vld1q_u32(cqe[3].dw + 4);
    // dw0 and dw1 of each CQE, then dw2 (packet 0's length), dw4 (its hash), dw5 (packet 1's
    // length): one field of the four CQEs per register.
    const uint32x4_t lo01 = vzip1q_u32(a0, a1), lo23 = vzip1q_u32(a2, a3);
    const uint32x4_t type = zip_lo64(lo01, lo23);
    const uint32x4_t flag = zip_hi64(lo01, lo23);
    const uint32x4_t len = vandq_u32(zip_lo64(vzip2q_u32(a0, a1), vzip2q_u32(a2, a3)), len_mask);
    const uint32x4_t b01 = vzip1q_u32(b0, b1), b23 = vzip1q_u32(b2, b3);
    const uint32x4_t hash = zip_lo64(b01, b23);
    const uint32x4_t next = zip_hi64(b01, b23);
    // Non-zero where a CQE is not okay, has other flags, a second packet or a length outside
    // 1..buf_len (len - 1 above buf_len - 1, unsigned).
    uint32x4_t bad = veorq_u32(vandq_u32(type, type_mask), okay);
    bad = vorrq_u32(bad, veorq_u32(flag, flags));
    bad = vorrq_u32(bad, vandq_u32(next, len_mask));
    bad = vorrq_u32(bad, vcgtq_u32(vsubq_u32(len, one), last));
    if (vmaxvq_u32(bad) != 0) break;
    vst1q_u64(reinterpret_cast<uint64_t*>(out + i),
              vld1q_u64(reinterpret_cast<const uint64_t*>(slot + i)));
    vst1q_u64(reinterpret_cast<uint64_t*>(out + i + 2),
              vld1q_u64(reinterpret_cast<const uint64_t*>(slot + i + 2)));
    rte_mbuf* const m0 = slot[i];
    rte_mbuf* const m1 = slot[i + 1];
    rte_mbuf* const m2 = slot[i + 2];
    rte_mbuf* const m3 = slot[i + 3];
    uint32x4_t pt = ptype;
    if constexpr (kL3FromFrame) {
      uint32x4_t et = vdupq_n_u32(ethertype_of(m0));
      et = vsetq_lane_u32(ethertype_of(m1), et, 1);
      et = vsetq_lane_u32(ethertype_of(m2), et, 2);
      et = vsetq_lane_u32(ethertype_of(m3), et, 3);
      const uint32x4_t v4 = vceqq_u32(et, vdupq_n_u32(rte_cpu_to_be_16(0x0800)));
      const uint32x4_t v6 = vceqq_u32(et, vdupq_n_u32(rte_cpu_to_be_16(0x86DD)));
      pt = vorrq_u32(pt, vandq_u32(v4, vdupq_n_u32(RTE_PTYPE_L3_IPV4_EXT_UNKNOWN)));
      pt = vorrq_u32(pt, vandq_u32(v6, vdupq_n_u32(RTE_PTYPE_L3_IPV6_EXT_UNKNOWN)));
    }
    // Each mbuf's packet_type, pkt_len, data_len | vlan_tci << 16, hash.rss.
    const uint32x4_t len_tci = vorrq_u32(len, tci);
    const uint32x4_t t0 = vzip1q_u32(pt, len), t1 = vzip1q_u32(len_tci, hash);
    const uint32x4_t t2 = vzip2q_u32(pt, len), t3 = vzip2q_u32(len_tci, hash);
    store_mbuf(m0, rearm, zip_lo64(t0, t1));
    store_mbuf(m1, rearm, zip_hi64(t0, t1));
    store_mbuf(m2, rearm, zip_lo64(t2, t3));
    store_mbuf(m3, rearm, zip_hi64(t2, t3));
    bytes = vaddq_u32(bytes, len);
  }
  // At most 64 CQEs of 16-bit lengths per call: no lane overflows.
  return {i, vaddvq_u32(bytes)};
}

template RxVecTaken rx_vec_take_neon<false>(const RxVecMeta&, const hw::Cqe*, rte_mbuf* const*,
                                            rte_mbuf**, unsigned);
template RxVecTaken rx_vec_take_neon<true>(const RxVecMeta&, const hw::Cqe*, rte_mbuf* const*,
                                           rte_mbuf**, unsigned);

}  // namespace mana
#endif
