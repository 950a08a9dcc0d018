// SPDX-License-Identifier: BSD-3-Clause
// The SSE4.1 RX kernel (rx_vec.h): four CQEs per step, their owner words first (four scalar
// loads into one register: SSE4.1 has no gather), then their first 32 bytes transposed into one
// register per field (type, flags, length, hash, the second packet's length), checked with one
// test, then transposed back into each mbuf's packet_type .. hash.rss (rx_vec_x86.h).
#include "priv.h"
#include "rx_vec_x86.h"

#if defined(__x86_64__)
namespace mana {
namespace {

// The kernel, inlined into both of its callers below.
template <bool kL3FromFrame>
MANA_SSE41 MANA_INLINE inline RxVecTaken take_groups_sse(const RxVecMeta& m, const hw::Cqe* cqe,
                                                         rte_mbuf* const* slot, rte_mbuf** out,
                                                         unsigned n) {
  using x86::load;
  const __m128i type_mask = _mm_set1_epi32(0x3f);
  const __m128i okay = _mm_set1_epi32(hw::kCqeRxOkay);
  const __m128i len_mask = _mm_set1_epi32(0xffff);
  const __m128i last = _mm_set1_epi32(static_cast<int>(m.buf_len - 1));
  const __m128i flags = _mm_set1_epi32(static_cast<int>(m.dw1));
  const __m128i owner = _mm_set1_epi32(static_cast<int>(m.owner));
  const __m128i owner_mask = _mm_set1_epi32(static_cast<int>(kRxOwnerCheckMask));
  const x86::Consts c = x86::consts_of(m);
  __m128i bytes = _mm_setzero_si128();
  unsigned i = 0;
  for (; n - i >= 4; i += 4, cqe += 4) {
    // The owner words first; the compiler barrier keeps the loads of the CQEs after them (x86
    // keeps loads in order, doc/hardware.md §4.12).
    constexpr unsigned kOwn = hw::Cqe::kOwnerDword;
    const __m128i own =
        _mm_setr_epi32(static_cast<int>(cqe[0].dw[kOwn]), static_cast<int>(cqe[1].dw[kOwn]),
                       static_cast<int>(cqe[2].dw[kOwn]), static_cast<int>(cqe[3].dw[kOwn]));
    rte_compiler_barrier();
    const __m128i a0 = load(cqe[0].dw), a1 = load(cqe[1].dw);
    const __m128i a2 = load(cqe[2].dw), a3 = load(cqe[3].dw);
    const __m128i b0 = load(cqe[0].dw + 4), b1 = load(cqe[1].dw + 4);
    const __m128i b2 = load(cqe[2].dw + 4), b3 = load(cqe[3].dw + 4);
    // dw0 and dw1 of each CQE, then dw2 (packet 0's length), dw4 (its hash), dw5 (packet 1's
    // length): one field of the four CQEs per register.
    const __m128i lo01 = _mm_unpacklo_epi32(a0, a1), lo23 = _mm_unpacklo_epi32(a2, a3);
    const __m128i type = _mm_unpacklo_epi64(lo01, lo23);
    const __m128i flag = _mm_unpackhi_epi64(lo01, lo23);
    const __m128i len = _mm_and_si128(
        _mm_unpacklo_epi64(_mm_unpackhi_epi32(a0, a1), _mm_unpackhi_epi32(a2, a3)), len_mask);
    const __m128i b01 = _mm_unpacklo_epi32(b0, b1), b23 = _mm_unpacklo_epi32(b2, b3);
    const __m128i hash = _mm_unpacklo_epi64(b01, b23);
    const __m128i next = _mm_unpackhi_epi64(b01, b23);
    // Non-zero where a CQE is not one of this RQ in the run's lap, not okay, has other flags, a
    // second packet or a length outside 1..buf_len.
    __m128i bad = _mm_and_si128(_mm_xor_si128(own, owner), owner_mask);
    bad = _mm_or_si128(bad, _mm_xor_si128(_mm_and_si128(type, type_mask), okay));
    bad = _mm_or_si128(bad, _mm_xor_si128(flag, flags));
    bad = _mm_or_si128(bad, _mm_and_si128(next, len_mask));
    bad = _mm_or_si128(bad, x86::bad_length(len, last));
    if (!_mm_testz_si128(bad, bad)) break;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), load(slot + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 2), load(slot + i + 2));
    __m128i pt = c.ptype;
    if constexpr (kL3FromFrame) {
      const auto et = [&](unsigned k) { return static_cast<int>(x86::ethertype_of(slot[i + k])); };
      pt = _mm_or_si128(pt, x86::l3_of_frames(_mm_setr_epi32(et(0), et(1), et(2), et(3))));
    }
    x86::store_group(c, pt, len, hash, slot + i);
    bytes = _mm_add_epi32(bytes, len);
  }
  return {i, x86::lane_sum(bytes)};
}

}  // namespace

template <bool kL3FromFrame>
MANA_SSE41 RxVecTaken rx_vec_take_sse(const RxVecMeta& m, const hw::Cqe* cqe, rte_mbuf* const* slot,
                                      rte_mbuf** out, unsigned n) {
  return take_groups_sse<kL3FromFrame>(m, cqe, slot, out, n);
}

template RxVecTaken rx_vec_take_sse<false>(const RxVecMeta&, const hw::Cqe*, rte_mbuf* const*,
                                           rte_mbuf**, unsigned);
template RxVecTaken rx_vec_take_sse<true>(const RxVecMeta&, const hw::Cqe*, rte_mbuf* const*,
                                          rte_mbuf**, unsigned);

}  // namespace mana
#endif
