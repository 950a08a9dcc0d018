// SPDX-License-Identifier: BSD-3-Clause
// The AVX2 RX kernel (rx_vec.h): as the SSE4.1 one (rx_vec_sse.cpp), with each CQE's first 32
// bytes in one load, so that one transpose puts type and hash, flags and the second packet's
// length, in the two halves of one register each, checked in one step.
#include "rx_vec_x86.h"

#if defined(__x86_64__)
namespace mana {

template <bool kL3FromFrame>
MANA_AVX2 RxVecTaken rx_vec_take_avx2(const RxVecMeta& m, const hw::Cqe* cqe, rte_mbuf* const* slot,
                                      rte_mbuf** out, unsigned n) {
  // Halves: [type | hash] and [flags | packet 1's length] as they come out of the transpose.
  const __m256i x_mask = _mm256_setr_epi32(0x3f, 0x3f, 0x3f, 0x3f, 0, 0, 0, 0);
  const __m256i x_want =
      _mm256_setr_epi32(hw::kCqeRxOkay, hw::kCqeRxOkay, hw::kCqeRxOkay, hw::kCqeRxOkay, 0, 0, 0, 0);
  const auto f = static_cast<int>(m.dw1);
  const __m256i y_mask = _mm256_setr_epi32(-1, -1, -1, -1, 0xffff, 0xffff, 0xffff, 0xffff);
  const __m256i y_want = _mm256_setr_epi32(f, f, f, f, 0, 0, 0, 0);
  const __m128i len_mask = _mm_set1_epi32(0xffff);
  const __m128i last = _mm_set1_epi32(static_cast<int>(m.buf_len - 1));
  const x86::Consts c = x86::consts_of(m);
  __m128i bytes = _mm_setzero_si128();
  unsigned i = 0;
  static_assert(sizeof(hw::Cqe) == 2 * sizeof(__m256i));
  for (; n - i >= 4; i += 4, cqe += 4) {
    const auto* p = reinterpret_cast<const __m256i*>(cqe);
    const __m256i c0 = _mm256_loadu_si256(p), c1 = _mm256_loadu_si256(p + 2);
    const __m256i c2 = _mm256_loadu_si256(p + 4), c3 = _mm256_loadu_si256(p + 6);
    const __m256i u01 = _mm256_unpacklo_epi32(c0, c1), u23 = _mm256_unpacklo_epi32(c2, c3);
    const __m256i x = _mm256_unpacklo_epi64(u01, u23);  // dw0 | dw4 (packet 0's hash)
    const __m256i y = _mm256_unpackhi_epi64(u01, u23);  // dw1 | dw5 (packet 1's length)
    const __m128i len = _mm_and_si128(
        _mm_unpacklo_epi64(
            _mm_unpackhi_epi32(_mm256_castsi256_si128(c0), _mm256_castsi256_si128(c1)),
            _mm_unpackhi_epi32(_mm256_castsi256_si128(c2), _mm256_castsi256_si128(c3))),
        len_mask);
    __m256i bad = _mm256_xor_si256(_mm256_and_si256(x, x_mask), x_want);
    bad = _mm256_or_si256(bad, _mm256_xor_si256(_mm256_and_si256(y, y_mask), y_want));
    bad = _mm256_or_si256(bad, _mm256_zextsi128_si256(x86::bad_length(len, last)));
    if (!_mm256_testz_si256(bad, bad)) break;
    const __m256i mbufs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(slot + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), mbufs);
    __m128i pt = c.ptype;
    if constexpr (kL3FromFrame) {
      // Each mbuf's buf_addr (at offset 0), then the 4 bytes at the frame's EtherType: two gathers.
      const __m256i bufs = _mm256_i64gather_epi64(static_cast<const long long*>(nullptr), mbufs, 1);
      const __m128i et = _mm256_i64gather_epi32(
          reinterpret_cast<const int*>(uintptr_t{RTE_PKTMBUF_HEADROOM + 12}), bufs, 1);
      pt = x86::ptype_of_frames(pt, _mm_and_si128(et, len_mask));
    }
    x86::store_group(c, pt, len, _mm256_extracti128_si256(x, 1), slot + i);
    bytes = _mm_add_epi32(bytes, len);
  }
  return {i, x86::lane_sum(bytes)};
}

template RxVecTaken rx_vec_take_avx2<false>(const RxVecMeta&, const hw::Cqe*, rte_mbuf* const*,
                                            rte_mbuf**, unsigned);
template RxVecTaken rx_vec_take_avx2<true>(const RxVecMeta&, const hw::Cqe*, rte_mbuf* const*,
                                           rte_mbuf**, unsigned);

MANA_AVX2 unsigned rx_vec_ready_avx2(const uint32_t* owner, unsigned n, uint32_t want,
                                     uint32_t mask) {
  constexpr int kStride = sizeof(hw::Cqe) / 4;  // dwords from one owner word to the next
  const __m256i index = _mm256_setr_epi32(0, kStride, 2 * kStride, 3 * kStride, 4 * kStride,
                                          5 * kStride, 6 * kStride, 7 * kStride);
  const __m256i w = _mm256_set1_epi32(static_cast<int>(want));
  const __m256i k = _mm256_set1_epi32(static_cast<int>(mask));
  unsigned i = 0;
  for (; n - i >= 8; i += 8) {
    const __m256i v =
        _mm256_i32gather_epi32(reinterpret_cast<const int*>(owner + i * kStride), index, 4);
    if (!_mm256_testz_si256(_mm256_xor_si256(v, w), k)) break;
  }
  return i;
}

MANA_AVX2 void rx_vec_post_avx2(rte_mbuf* const* fresh, rte_mbuf** slot, uint8_t* sge, unsigned n) {
  static_assert(offsetof(rte_mbuf, buf_addr) == 0);
  const __m256i headroom = _mm256_set1_epi64x(RTE_PKTMBUF_HEADROOM);
  unsigned i = 0;
  for (; n - i >= 4; i += 4, sge += 4 * hw::kBasicUnit) {
    const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(fresh + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot + i), m);
    // Each buffer's buf_addr (offset 0 of its mbuf) in one gather, plus the headroom.
    const __m256i a = _mm256_add_epi64(
        _mm256_i64gather_epi64(static_cast<const long long*>(nullptr), m, 1), headroom);
    const __m128i lo = _mm256_castsi256_si128(a), hi = _mm256_extracti128_si256(a, 1);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(sge), lo);
    _mm_storeh_pd(reinterpret_cast<double*>(sge + hw::kBasicUnit), _mm_castsi128_pd(lo));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(sge + 2 * hw::kBasicUnit), hi);
    _mm_storeh_pd(reinterpret_cast<double*>(sge + 3 * hw::kBasicUnit), _mm_castsi128_pd(hi));
  }
  for (; i < n; i++, sge += hw::kBasicUnit) {
    rte_mbuf* const m = fresh[i];
    slot[i] = m;
    const uint64_t addr = reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM;
    std::memcpy(sge, &addr, sizeof(addr));
  }
}

}  // namespace mana
#endif
