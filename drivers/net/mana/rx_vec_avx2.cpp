// SPDX-License-Identifier: BSD-3-Clause
// The AVX2 RX kernel (rx_vec.h): as the SSE4.1 one (rx_vec_sse.cpp), with each CQE's first 32
// bytes in one load, so that one transpose puts type and hash, flags and the second packet's
// length, in the two halves of one register each, checked in one step with the group's owner
// words; the mbufs' fields are transposed back two mbufs per register.
#include "priv.h"
#include "rx_vec_x86.h"

#if defined(__x86_64__)
namespace mana {
namespace {

// The kernel, inlined into both of its callers below.
template <bool kL3FromFrame>
MANA_AVX2 MANA_INLINE inline RxVecTaken take_groups(const RxVecMeta& m, const hw::Cqe* cqe,
                                                    rte_mbuf* const* slot, rte_mbuf** out,
                                                    unsigned n) {
  // The length check below works on 16-bit halves: buf_len - 1 must fit in one (a uint16_t data
  // room always does).
  if (m.buf_len - 1 > 0xffff) return {0, 0};
  // Halves: [type | hash] and [flags | packet 1's length] as they come out of the transpose.
  const __m256i x_mask = _mm256_setr_epi32(0x3f, 0x3f, 0x3f, 0x3f, 0, 0, 0, 0);
  const __m256i x_want =
      _mm256_setr_epi32(hw::kCqeRxOkay, hw::kCqeRxOkay, hw::kCqeRxOkay, hw::kCqeRxOkay, 0, 0, 0, 0);
  const auto f = static_cast<int>(m.dw1);
  const __m256i y_mask = _mm256_setr_epi32(-1, -1, -1, -1, 0xffff, 0xffff, 0xffff, 0xffff);
  const __m256i y_want = _mm256_setr_epi32(f, f, f, f, 0, 0, 0, 0);
  // [packet 0's length | its hash] from [dw2 | dw4].
  const __m256i lh_mask = _mm256_setr_epi32(0xffff, 0xffff, 0xffff, 0xffff, -1, -1, -1, -1);
  const __m128i last = _mm_set1_epi32(static_cast<int>(m.buf_len - 1));
  const __m128i one_less = _mm_set1_epi32(-1);
  const __m128i owner = _mm_set1_epi32(static_cast<int>(m.owner));
  constexpr int kOwnerMask = static_cast<int>(kRxOwnerCheckMask);
  // [length check | owner words]: every bit of the first, the checked bits of the second.
  const __m256i lo_mask =
      _mm256_setr_epi32(-1, -1, -1, -1, kOwnerMask, kOwnerMask, kOwnerMask, kOwnerMask);
  constexpr int kStride = sizeof(hw::Cqe) / 4;  // dwords from one owner word to the next
  const __m128i owner_index = _mm_setr_epi32(0, kStride, 2 * kStride, 3 * kStride);
  const __m128i rearm =
      _mm_set_epi64x(static_cast<long long>(m.ol_flags), static_cast<long long>(m.rearm));
  // [packet_type | vlan_tci << 16]: what the lanes of packet_type and of data_len | vlan_tci
  // start from.
  const auto pt = static_cast<int>(m.ptype), tci = static_cast<int>(uint32_t{m.vlan_tci} << 16);
  const __m256i base = _mm256_setr_epi32(pt, pt, pt, pt, tci, tci, tci, tci);
  __m128i bytes = _mm_setzero_si128();
  unsigned i = 0;
  static_assert(sizeof(hw::Cqe) == 2 * sizeof(__m256i));
  for (; n - i >= 4; i += 4, cqe += 4) {
    // The owner words first; the compiler barrier keeps the loads of the CQEs after them (x86
    // keeps loads in order, doc/hardware.md §4.12).
    const __m128i own = _mm_i32gather_epi32(
        reinterpret_cast<const int*>(cqe->dw + hw::Cqe::kOwnerDword), owner_index, 4);
    rte_compiler_barrier();
    const auto* p = reinterpret_cast<const __m256i*>(cqe);
    const __m256i c0 = _mm256_loadu_si256(p), c1 = _mm256_loadu_si256(p + 2);
    const __m256i c2 = _mm256_loadu_si256(p + 4), c3 = _mm256_loadu_si256(p + 6);
    const __m256i u01 = _mm256_unpacklo_epi32(c0, c1), u23 = _mm256_unpacklo_epi32(c2, c3);
    const __m256i h01 = _mm256_unpackhi_epi32(c0, c1), h23 = _mm256_unpackhi_epi32(c2, c3);
    const __m256i x = _mm256_unpacklo_epi64(u01, u23);  // dw0 | dw4 (packet 0's hash)
    const __m256i y = _mm256_unpackhi_epi64(u01, u23);  // dw1 | dw5 (packet 1's length)
    const __m256i lh =
        _mm256_and_si256(_mm256_blend_epi32(_mm256_unpacklo_epi64(h01, h23), x, 0xf0), lh_mask);
    const __m128i len = _mm256_castsi256_si128(lh);
    __m256i bad = _mm256_and_si256(_mm256_xor_si256(x, x_want), x_mask);
    bad = _mm256_or_si256(bad, _mm256_and_si256(_mm256_xor_si256(y, y_want), y_mask));
    // Outside 1..buf_len: len - 1 (all ones for 0) above buf_len - 1 in either 16-bit half.
    const __m128i bad_len = _mm_subs_epu16(_mm_add_epi32(len, one_less), last);
    bad = _mm256_or_si256(bad,
                          _mm256_and_si256(_mm256_inserti128_si256(_mm256_castsi128_si256(bad_len),
                                                                   _mm_xor_si128(own, owner), 1),
                                           lo_mask));
    // Counted before the test and taken off again for the group that fails it: GCC keeps fewer
    // copies of the sum than with the count after the test.
    bytes = _mm_add_epi32(bytes, len);
    if (!_mm256_testz_si256(bad, bad)) {
      bytes = _mm_sub_epi32(bytes, len);
      break;
    }
    const __m256i mbufs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(slot + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), mbufs);
    __m128i l3 = _mm_setzero_si128();
    if constexpr (kL3FromFrame) {
      // The 4 bytes at each frame's EtherType: one gather at a known offset from the mbufs, or
      // two through their buf_addr (at offset 0).
      __m128i et;
      if (m.frame_offset != 0) {
        et = _mm256_i64gather_epi32(reinterpret_cast<const int*>(uintptr_t{m.frame_offset} + 12),
                                    mbufs, 1);
      } else {
        const __m256i bufs =
            _mm256_i64gather_epi64(static_cast<const long long*>(nullptr), mbufs, 1);
        et = _mm256_i64gather_epi32(
            reinterpret_cast<const int*>(uintptr_t{RTE_PKTMBUF_HEADROOM + 12}), bufs, 1);
      }
      l3 = x86::l3_of_frames(_mm_and_si128(et, _mm_set1_epi32(0xffff)));
    }
    // [packet_type | data_len, vlan_tci] and [pkt_len | hash.rss], one mbuf per lane; interleaved
    // and put in order, each mbuf's 16 bytes from packet_type on, two mbufs per register.
    const __m256i pd =
        _mm256_or_si256(base, _mm256_inserti128_si256(_mm256_castsi128_si256(l3), len, 1));
    const __m256i f01 = _mm256_permute4x64_epi64(_mm256_unpacklo_epi32(pd, lh), 0xd8);
    const __m256i f23 = _mm256_permute4x64_epi64(_mm256_unpackhi_epi32(pd, lh), 0xd8);
    x86::store_mbuf(slot[i], rearm, _mm256_castsi256_si128(f01));
    x86::store_mbuf(slot[i + 1], rearm, _mm256_extracti128_si256(f01, 1));
    x86::store_mbuf(slot[i + 2], rearm, _mm256_castsi256_si128(f23));
    x86::store_mbuf(slot[i + 3], rearm, _mm256_extracti128_si256(f23, 1));
  }
  return {i, x86::lane_sum(bytes)};
}

}  // namespace

template <bool kL3FromFrame>
MANA_AVX2 RxVecTaken rx_vec_take_avx2(const RxVecMeta& m, const hw::Cqe* cqe, rte_mbuf* const* slot,
                                      rte_mbuf** out, unsigned n) {
  return take_groups<kL3FromFrame>(m, cqe, slot, out, n);
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

MANA_AVX2 void rx_vec_post_avx2(rte_mbuf* const* fresh, rte_mbuf** slot, uint8_t* sge, unsigned n,
                                uint32_t frame_offset) {
  static_assert(offsetof(rte_mbuf, buf_addr) == 0);
  const __m256i headroom = _mm256_set1_epi64x(RTE_PKTMBUF_HEADROOM);
  const __m256i offset = _mm256_set1_epi64x(frame_offset);
  unsigned i = 0;
  for (; n - i >= 4; i += 4, sge += 4 * hw::kBasicUnit) {
    const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(fresh + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot + i), m);
    // Each buffer's frame: at the known offset from its mbuf, or its buf_addr (offset 0 of the
    // mbuf, one gather) plus the headroom.
    const __m256i a =
        frame_offset != 0
            ? _mm256_add_epi64(m, offset)
            : _mm256_add_epi64(_mm256_i64gather_epi64(static_cast<const long long*>(nullptr), m, 1),
                               headroom);
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
