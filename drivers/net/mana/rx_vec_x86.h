// SPDX-License-Identifier: BSD-3-Clause
// What the x86 RX kernels (rx_vec_sse.cpp, rx_vec_avx2.cpp) share: writing the mbufs of a group
// of four CQEs once their fields sit one per register. SSE4.1 by function attribute, so that only
// code that rx_simd.cpp runs on such CPUs uses it (an AVX2 function may inline it).
#pragma once

#if defined(__x86_64__)
#include <cstring>

#include <immintrin.h>
#include <rte_byteorder.h>
#include <rte_mbuf_core.h>
#include <rte_mbuf_ptype.h>

#include "rx_vec.h"

// Always inlined: GCC inlines nothing into the AVX2 kernel (tuned for Haswell) from functions of
// another target otherwise, and a call per group of four costs more than the group's stores.
#define MANA_INLINE __attribute__((always_inline))

namespace mana::x86 {

MANA_SSE41 MANA_INLINE inline __m128i load(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

// The EtherType of the frame the refill posted into `m` (rx_cqe.h rx_l3_ptype_of_frame), as on the
// wire.
inline uint32_t ethertype_of(const rte_mbuf* m) {
  uint16_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(m->buf_addr) + RTE_PKTMBUF_HEADROOM + 12, sizeof(v));
  return v;
}

// What every mbuf of a kernel's call gets.
struct Consts {
  __m128i rearm;  // rearm_data, ol_flags
  __m128i ptype;
  __m128i tci;  // vlan_tci << 16 in each lane
};

MANA_SSE41 MANA_INLINE inline Consts consts_of(const RxVecMeta& m) {
  return {_mm_set_epi64x(static_cast<long long>(m.ol_flags), static_cast<long long>(m.rearm)),
          _mm_set1_epi32(static_cast<int>(m.ptype)),
          _mm_set1_epi32(static_cast<int>(uint32_t{m.vlan_tci} << 16))};
}

MANA_SSE41 MANA_INLINE inline void store_mbuf(rte_mbuf* m, __m128i rearm, __m128i fields) {
  auto* p = reinterpret_cast<uint8_t*>(m);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + kRxRearmOffset), rearm);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + kRxFieldsOffset), fields);
}

// The L3 packet types of four frames whose EtherTypes (as on the wire, one per lane, the upper 16
// bits of each lane zero) are `et`: IPv4, IPv6 or 0.
MANA_SSE41 MANA_INLINE inline __m128i l3_of_frames(__m128i et) {
  const __m128i v4 = _mm_cmpeq_epi32(et, _mm_set1_epi32(kRxEtherIpv4));
  const __m128i v6 = _mm_cmpeq_epi32(et, _mm_set1_epi32(kRxEtherIpv6));
  return _mm_blendv_epi8(_mm_and_si128(v6, _mm_set1_epi32(RTE_PTYPE_L3_IPV6_EXT_UNKNOWN)),
                         _mm_set1_epi32(RTE_PTYPE_L3_IPV4_EXT_UNKNOWN), v4);
}

// Writes the four mbufs of `slot` from the CQEs' packet types, lengths and hashes (one CQE per
// lane); the caller copied the pointers to the output.
MANA_SSE41 MANA_INLINE inline void store_group(const Consts& c, __m128i pt, __m128i len,
                                               __m128i hash, rte_mbuf* const* slot) {
  // Each mbuf's packet_type, pkt_len, data_len | vlan_tci << 16, hash.rss.
  const __m128i len_tci = _mm_or_si128(len, c.tci);
  const __m128i t0 = _mm_unpacklo_epi32(pt, len), t1 = _mm_unpacklo_epi32(len_tci, hash);
  const __m128i t2 = _mm_unpackhi_epi32(pt, len), t3 = _mm_unpackhi_epi32(len_tci, hash);
  store_mbuf(slot[0], c.rearm, _mm_unpacklo_epi64(t0, t1));
  store_mbuf(slot[1], c.rearm, _mm_unpackhi_epi64(t0, t1));
  store_mbuf(slot[2], c.rearm, _mm_unpacklo_epi64(t2, t3));
  store_mbuf(slot[3], c.rearm, _mm_unpackhi_epi64(t2, t3));
}

// Non-zero lanes where `len` is outside 1..buf_len (len - 1 above buf_len - 1, unsigned).
MANA_SSE41 MANA_INLINE inline __m128i bad_length(__m128i len, __m128i last) {
  const __m128i below = _mm_sub_epi32(len, _mm_set1_epi32(1));
  return _mm_xor_si128(below, _mm_min_epu32(below, last));
}

// The sum of the four lanes (at most 16 lengths of 16 bits each per lane: no overflow).
MANA_SSE41 MANA_INLINE inline uint32_t lane_sum(__m128i v) {
  v = _mm_add_epi32(v, _mm_srli_si128(v, 8));
  v = _mm_add_epi32(v, _mm_srli_si128(v, 4));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(v));
}

}  // namespace mana::x86
#endif
