// SPDX-License-Identifier: BSD-3-Clause
// RX burst (doc/hardware.md §4.4, §4.5, §4.7, §7): poll the CQ, deliver okay/coalesced packets with
// their metadata, count and recycle error completions, refill with fresh mbufs in bulk and ring the
// RQ doorbell once. No locks, allocation beyond the mempool, division or logging.
#include <cstring>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "burst.h"
#include "priv.h"
#include "rx_cqe.h"
#include "rx_queue.h"
#include "rx_vec.h"

namespace mana {
namespace {

constexpr unsigned kMaxRxBurst = kMaxRxRefill;

unsigned rx_error_kind(uint32_t type) {
  switch (type) {
    case hw::kCqeInvalid:
      return 0;
    case hw::kCqeRxObjectFence:
      return 1;
    case hw::kCqeRxTruncated:
      return 2;
    default:
      return 3;
  }
}

// What the mbuf gets from a CQE's dw1 (the queue keeps the last one, priv.h RxMeta).
template <bool kChecksum, bool kRssHash, bool kVlanStrip>
constexpr uint8_t kMetaVariant = 1 + (kChecksum ? 4 : 0) + (kRssHash ? 2 : 0) +
                                 (kVlanStrip ? 1 : 0);

template <bool kChecksum, bool kRssHash, bool kVlanStrip>
__attribute__((noinline)) RxMeta decode_meta(RxQueue& q, uint32_t dw1) {
  RxMeta meta{};
  meta.dw1 = dw1;
  const RxPtype pt = rx_packet_type(dw1);
  meta.ptype = pt.ptype;
  meta.l3_from_frame = pt.l3_from_frame;
  uint64_t ol = 0;
  if constexpr (kChecksum) ol |= rx_checksum_flags(dw1);
  if constexpr (kRssHash) {
    if (rx_hash_valid(dw1)) ol |= RTE_MBUF_F_RX_RSS_HASH;
  }
  if (rx_vlan_present(dw1)) {
    ol |= RTE_MBUF_F_RX_VLAN;
    if constexpr (kVlanStrip)
      ol |= RTE_MBUF_F_RX_VLAN_STRIPPED;
    else
      meta.ptype = (meta.ptype & ~RTE_PTYPE_L2_MASK) | RTE_PTYPE_L2_ETHER_VLAN;
  }
  meta.ol_flags = ol;
  meta.vlan_tci = rx_vlan_present(dw1) ? rx_vlan_tci(dw1) : 0;
  meta.tag_back = !kVlanStrip && rx_vlan_present(dw1);
  meta.variant = kMetaVariant<kChecksum, kRssHash, kVlanStrip>;
  q.meta = meta;
  return meta;
}

// The NIC always strips the outer 802.1Q tag (doc/hardware.md §4.10). Without VLAN_STRIP the
// application expects it in the data, so it goes back in front of the EtherType, in the headroom.
// The CQE carries the VID only: PCP and DEI come back as 0.
inline void reinsert_vlan_tag(rte_mbuf* m, uint16_t tci) {
  uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
  m->data_off -= RTE_VLAN_HLEN;
  m->data_len += RTE_VLAN_HLEN;
  m->pkt_len += RTE_VLAN_HLEN;
  std::memmove(frame - RTE_VLAN_HLEN, frame, 2 * RTE_ETHER_ADDR_LEN);
  uint8_t* tag = frame - RTE_VLAN_HLEN + 2 * RTE_ETHER_ADDR_LEN;
  tag[0] = 0x81;
  tag[1] = 0x00;
  tag[2] = static_cast<uint8_t>(tci >> 8);
  tag[3] = static_cast<uint8_t>(tci);
}

// What one burst builds up, kept in registers.
struct Burst {
  rte_mbuf** pkts;
  unsigned out;
  unsigned budget;
  uint64_t bytes;
  const hw::Cqe* carried;  // the CQE carried over from the last burst, if any
  bool overflow;           // a poll met an entry of another lap (counted once per burst)
  bool misdirected;        // the last poll stopped at a completed CQE of another queue
};

// The tag the NIC stripped, put back for an application that did not ask for VLAN_STRIP. Returns
// the packet's length as delivered.
__attribute__((noinline)) uint32_t put_tag_back(rte_mbuf* m, uint16_t vlan_tci) {
  reinsert_vlan_tag(m, vlan_tci);
  return m->pkt_len;
}

// The L3 packet type from the frame at the address the refill posted, for a CQE that cannot tell
// the IP version (rx_cqe.h RxPtype).
inline uint32_t l3_ptype_of(const rte_mbuf* m) {
  return rx_l3_ptype_of_frame(static_cast<const uint8_t*>(m->buf_addr) + RTE_PKTMBUF_HEADROOM);
}

// Fills `m`, the buffer of packet `k` of `cqe`, with `meta` (the metadata of its dw1). The mbuf
// came raw from the pool (next = NULL, nb_segs = 1: DPDK's invariant for free mbufs): one 8-byte
// store rearms it, the rest are the fields a received mbuf carries. Returns the length as
// delivered.
template <bool kRssHash, bool kTagBack = true>
inline uint32_t fill_mbuf(rte_mbuf* m, uint64_t rearm, const RxMeta& meta, bool l3_from_frame,
                          const hw::Cqe& cqe, unsigned k, uint32_t len) {
  std::memcpy(reinterpret_cast<uint8_t*>(m) + offsetof(rte_mbuf, rearm_data), &rearm,
              sizeof(rearm));
  m->ol_flags = meta.ol_flags;
  m->packet_type = meta.ptype | (l3_from_frame ? l3_ptype_of(m) : 0);
  m->pkt_len = len;
  m->data_len = static_cast<uint16_t>(len);
  m->vlan_tci = meta.vlan_tci;
  // The NIC's hash whatever the offloads (meaningful with RTE_MBUF_F_RX_RSS_HASH only): the vector
  // kernels write these 16 bytes in one store.
  m->hash.rss = cqe.rx_packet(k).packet_hash;
  if (kTagBack && __builtin_expect(meta.tag_back, 0)) len = put_tag_back(m, meta.vlan_tci);
  return len;
}

// The slow path's delivery of the next RQ WQE's buffer.
template <bool kChecksum, bool kRssHash, bool kVlanStrip>
inline void deliver(RxQueue& q, Burst& b, const hw::Cqe& cqe, unsigned k, uint32_t len) {
  rte_mbuf* m = q.mbufs[q.rq.tail_bu++ & q.desc_mask];
  const uint32_t dw1 = cqe.dw[hw::Cqe::kRxFlagsDword];
  if (dw1 != q.meta.dw1) decode_meta<kChecksum, kRssHash, kVlanStrip>(q, dw1);
  const RxMeta meta = q.meta;
  b.bytes += fill_mbuf<kRssHash>(m, q.rearm, meta, meta.l3_from_frame, cqe, k, len);
  b.pkts[b.out++] = m;
}

// A consumed WQE whose packet is not delivered: its buffer stays in the slot, tagged, and the
// refill posts it again in place.
inline void recycle_wqe(RxQueue& q) {
  rte_mbuf*& slot = q.mbufs[q.rq.tail_bu++ & q.desc_mask];
  slot = reinterpret_cast<rte_mbuf*>(reinterpret_cast<uintptr_t>(slot) | kRecycledTag);
  q.recycled++;
}

// Keeps the rest of `cqe` from packet `k` for the next burst, from a copy (doc/hardware.md §4.5).
__attribute__((noinline)) void save_partial(RxQueue& q, const Burst& b, const hw::Cqe* cqe,
                                            unsigned k) {
  if (cqe != b.carried) {
    hw::Cqe* copy = &q.partial_copies[b.carried == &q.partial_copies[0] ? 1 : 0];
    *copy = *cqe;
    cqe = copy;
  }
  q.partial_cqe = cqe;
  q.partial_next = static_cast<uint16_t>(k);
}

// Every CQE the fast path does not take: coalesced, zero-length, oversize, error completions, and
// the rest of a carried CQE from packet `k`. Returns false when the burst's budget, or the posted
// WQEs (a CQE naming more than were posted), ran out inside the CQE: its rest is kept.
template <bool kChecksum, bool kRssHash, bool kVlanStrip>
__attribute__((noinline)) bool rx_cqe_slow(RxQueue& q, Burst& b, const hw::Cqe* cqe, unsigned k) {
  const uint32_t type = cqe->type();
  if (type != hw::kCqeRxOkay && type != hw::kCqeRxCoalesced4) {
    // Only a truncated packet consumed a WQE; an object fence, CQE_INVALID or an unknown type
    // consumed none (the kernel's mana_process_rx_cqe, doc/hardware.md §4.7): counted by type.
    if (type != hw::kCqeRxTruncated) {
      q.stats.cqe_errors[rx_error_kind(type)]++;
      return true;
    }
    if (q.rq.tail_bu == q.rq.head_bu) {
      save_partial(q, b, cqe, 0);
      return false;
    }
    recycle_wqe(q);
    q.stats.errors++;
    q.stats.cqe_errors[rx_error_kind(type)]++;
    return true;
  }
  const unsigned count = rx_cqe_packets(*cqe);
  if (count == 0) {  // consumed no RQ WQE: nothing to deliver or recycle
    q.stats.zero_length_cqes++;
    return true;
  }
  for (; k < count && b.out < b.budget && q.rq.tail_bu != q.rq.head_bu; k++) {
    const uint32_t len = hw::RxPacketInfo::Length::get(cqe->rx_packet(k).dw0);
    // A length beyond the posted buffer would let the application read past the mbuf: an error,
    // the buffer is reposted (doc/hardware.md §4.7).
    if (len > q.buf_len) {
      recycle_wqe(q);
      q.stats.errors++;
      q.stats.oversize_packets++;
      continue;
    }
    deliver<kChecksum, kRssHash, kVlanStrip>(q, b, *cqe, k, len);
  }
  if (k == count) return true;
  save_partial(q, b, cqe, k);
  return false;
}

// How many CQEs from the head the NIC has completed for this RQ, up to `max`: the owner bits of
// each (the same value until the CQ wraps) and its queue, one compare per entry, then one read
// barrier for the batch (doc/hardware.md §4.5). Each owner word is read once: the entry that ends
// the run is judged on the value that ended it (a second read could see a CQE that landed in
// between, and count an overflow that did not happen). An entry of another lap means the NIC
// overflowed the CQ: nothing is read there, the poll is counted. A completed entry for another
// queue ends the run too (`b.misdirected`).
template <RxSimd S>
inline unsigned cq_ready(const RxQueue& q, Burst& b, unsigned max) {
  const CompletionQueue& cq = q.cq;
  unsigned n = 0;
  uint32_t head = cq.head;
  b.misdirected = false;
  while (n < max) {
    const uint32_t lap = (head >> cq.log2_count) & hw::kOwnerMask;
    const uint32_t in_lap = RTE_MIN(max - n, cq.mask + 1 - (head & cq.mask));
    constexpr unsigned kStride = sizeof(hw::Cqe) / 4;
    const uint32_t* const first = cq.ring[head & cq.mask].dw + hw::Cqe::kOwnerDword;
    const uint32_t* const end = first + in_lap * kStride;
    const uint32_t want = rx_owner_word(head, cq.log2_count, q.rq.id);
    // Non-zero when the entry whose owner word is `v` is not a CQE of this lap for this RQ (the
    // bits of rx_vec.h kRxOwnerCheckMask).
    const auto other = [want](uint32_t v) { return (v ^ want) & kRxOwnerCheckMask; };
    const auto at = [](const uint32_t* e) { return __atomic_load_n(e, __ATOMIC_RELAXED); };
    const uint32_t* p = first;
#if defined(__x86_64__)
    // AVX2: eight entries per gather and test while eight remain; the loops below go on from
    // there.
    if constexpr (S == RxSimd::kAvx2)
      p += rx_vec_ready_avx2(first, in_lap, want, kRxOwnerCheckMask) * kStride;
#endif
    // Four entries per check while four remain.
    while (end - p >= 4 * kStride && (other(at(p)) | other(at(p + kStride)) |
                                      other(at(p + 2 * kStride)) | other(at(p + 3 * kStride))) == 0)
      p += 4 * kStride;
    uint32_t v = want;
    while (p != end && other(v = at(p)) == 0) p += kStride;
    const auto i = static_cast<uint32_t>((p - first) / kStride);
    n += i;
    head += i;
    if (i < in_lap) {
      const uint32_t seen = hw::Cqe::Owner::get(v);
      if (seen == lap)
        b.misdirected = true;
      else if (seen != ((lap - 1) & hw::kOwnerMask))
        // The NIC lapped the consumer: the entry is not read and the queue stays stuck; the
        // counter makes that visible (doc/hardware.md §4.5).
        b.overflow = true;
      break;
    }
  }
  rte_io_rmb();  // dmb oshld on arm64; x86 keeps loads in order (doc/hardware.md §4.12)
  return n;
}

// A completed CQE for another queue (or an SQ) in this RQ's CQ: not ours to process, it consumes
// nothing of the RQ; counted (rx_qN_misdirected_cqes).
__attribute__((noinline)) void skip_misdirected(RxQueue& q) {
  q.cq.head++;
  q.stats.misdirected_cqes++;
}

// Of the `slots` WQEs from the head, how many hold a recycled buffer.
__attribute__((noinline)) unsigned count_recycled(const RxQueue& q, unsigned slots) {
  unsigned n = 0;
  for (unsigned i = 0; i < slots; i++)
    n += (reinterpret_cast<uintptr_t>(q.mbufs[(q.rq.head_bu + i) & q.desc_mask]) & kRecycledTag);
  return n;
}

// Posts WQEs from the head: a recycled buffer again in its own slot, `fresh` ones in the others,
// until `slots` or until `fresh` runs out; with several lkeys in the pool, each buffer's.
__attribute__((noinline)) void post_mixed(RxQueue& q, rte_mbuf** fresh, unsigned n_fresh,
                                          unsigned slots, const MrRegistrar& r) {
  unsigned f = 0;
  for (unsigned i = 0; i < slots; i++) {
    const auto v = reinterpret_cast<uintptr_t>(q.mbufs[q.rq.head_bu & q.desc_mask]);
    rte_mbuf* m;
    if (v & kRecycledTag) {
      m = reinterpret_cast<rte_mbuf*>(v & ~kRecycledTag);
      q.recycled--;
    } else if (f < n_fresh) {
      m = fresh[f++];
    } else {
      break;
    }
    uint8_t* sge = rx_post(q, m);
    if (q.lkey == kInvalidLkey) rx_set_lkey(sge, rx_buffer_lkey(q, m, r));
  }
}

// The pool could not give `need` mbufs at once: as many as it has, then the buffers of this
// burst's last packets, which are dropped (counted in nombuf) so that the ring stays full. Returns
// how many buffers `fresh` holds.
__attribute__((noinline)) unsigned refill_short(RxQueue& q, Burst& b, rte_mbuf** fresh,
                                                unsigned need) {
  unsigned got = 0;
  while (got < need && rte_mempool_get(q.mp, reinterpret_cast<void**>(&fresh[got])) == 0) got++;
  const unsigned drop = RTE_MIN(need - got, b.out);
  for (unsigned j = 0; j < drop; j++) {
    rte_mbuf* m = b.pkts[b.out - drop + j];
    b.bytes -= m->pkt_len;
    fresh[got + j] = m;
  }
  b.out -= drop;
  q.stats.nombuf += drop;
  return got + drop;
}

// Posts a buffer for every consumed WQE (at most one burst's worth at a time) and rings the RQ
// doorbell once. Buffers come raw from the pool: the burst rearms them when they are delivered.
template <RxSimd S>
inline void refill(RxQueue& q, Burst& b, const ProcessPrivate& pp) {
  constexpr unsigned kMaxRefill = kMaxRxRefill;
  const uint32_t free = wq_free_bu(q.rq);
  const unsigned slots = free < kMaxRefill ? free : kMaxRefill;
  const unsigned recycled = __builtin_expect(q.recycled != 0, 0) ? count_recycled(q, slots) : 0;
  unsigned n = slots - recycled;
  rte_mbuf* local[kMaxRefill];
  rte_mbuf** fresh = local;
  if (n != 0) {
    // Straight from the top of the lcore's cache when it holds them all, as DPDK's own vector
    // drivers take them: no copy into a local array first.
    rte_mempool_cache* const cache = rte_mempool_default_cache(q.mp, rte_lcore_id());
    if (__builtin_expect(cache != nullptr && cache->len >= n, 1)) {
      cache->len -= n;
      fresh = reinterpret_cast<rte_mbuf**>(&cache->objs[cache->len]);
      RTE_MEMPOOL_CACHE_STAT_ADD(cache, get_success_bulk, 1);
      RTE_MEMPOOL_CACHE_STAT_ADD(cache, get_success_objs, n);
    } else if (__builtin_expect(
                   rte_mempool_generic_get(q.mp, reinterpret_cast<void**>(local), n, cache) != 0,
                   0)) {
      n = refill_short(q, b, local, n);
    }
  }
  if (__builtin_expect(recycled == 0 && q.lkey != kInvalidLkey, 1)) {
    rte_mbuf** const mbufs = q.mbufs;
    uint8_t* const ring = q.rq.ring;
    const uint32_t desc_mask = q.desc_mask, ring_wqes = (q.rq.size_mask + 1) / hw::kBasicUnit;
    uint32_t head = q.rq.head_bu;
    // Runs where neither the mbuf ring nor the RQ wraps.
    for (unsigned i = 0; i < n;) {
      const uint32_t wqe_index = head & (ring_wqes - 1);
      const unsigned run =
          RTE_MIN(n - i, RTE_MIN(desc_mask + 1 - (head & desc_mask), ring_wqes - wqe_index));
      rte_mbuf** slot = mbufs + (head & desc_mask);
      uint8_t* sge = ring + wqe_index * hw::kBasicUnit + kRxSgeOffset;
#if defined(__x86_64__)
      if constexpr (S == RxSimd::kAvx2) {
        rx_vec_post_avx2(fresh + i, slot, sge, run, q.frame_offset);
        i += run;
        head += run;
        continue;
      }
#endif
      for (rte_mbuf** f = fresh + i; f != fresh + i + run; f++, slot++, sge += hw::kBasicUnit) {
        rte_mbuf* m = *f;
        *slot = m;
        const uint64_t addr = reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM;
        std::memcpy(sge, &addr, sizeof(addr));
      }
      i += run;
      head += run;
    }
    q.rq.head_bu = head;
  } else {
    post_mixed(q, fresh, n, slots, pp.registrar);
  }
  ring_rq_doorbell(pp.db_page, q.rq);
}

// What the fast path compares a CQE's dw1 with: the decoded one, or never equal when packets of
// that dw1 get their tag back (put_tag_back).
inline uint64_t meta_key(const RxMeta& meta) {
  return uint64_t{meta.dw1} | (meta.tag_back ? uint64_t{1} << 32 : 0);
}

// The fast path's state, kept in registers while it runs (the mbuf stores could alias the queue).
struct FastState {
  RxMeta meta;
  uint64_t key;
  uint64_t rearm;
  uint64_t bytes;
  rte_mbuf** out;
  uint32_t buf_len;
  uint32_t owner;  // the x86 kernels': the owner word of the run's lap (rx_vec.h RxVecMeta)
};

// Takes the common CQEs (okay, one packet that fits its buffer) of a run from `first` where
// neither the CQ nor the mbuf ring wraps, the packet type read from the frame or not as the
// current flags say (kL3FromFrame, a template parameter so that the loop does not test it). Stops
// at any other CQE (`*other`) and after a CQE whose flags change kL3FromFrame. Returns the CQEs
// taken.
template <bool kChecksum, bool kRssHash, bool kVlanStrip, bool kL3FromFrame>
inline unsigned take_run_scalar(RxQueue& q, FastState& s, const hw::Cqe* const first,
                                rte_mbuf** slot, unsigned run, const hw::Cqe** other) {
  const hw::Cqe* cqe = first;
  for (const hw::Cqe* const end = first + run; cqe != end; cqe++) {
    const uint32_t len = hw::RxPacketInfo::Length::get(cqe->rx_packet(0).dw0);
    if (__builtin_expect(cqe->type() != hw::kCqeRxOkay || len - 1 >= s.buf_len ||
                             hw::RxPacketInfo::Length::get(cqe->rx_packet(1).dw0) != 0,
                         0)) {
      *other = cqe;
      break;
    }
    const uint32_t dw1 = cqe->dw[hw::Cqe::kRxFlagsDword];
    rte_mbuf* m = *slot++;
    if (__builtin_expect(uint64_t{dw1} != s.key, 0)) {
      if (dw1 != s.meta.dw1) {
        s.meta = decode_meta<kChecksum, kRssHash, kVlanStrip>(q, dw1);
        s.key = meta_key(s.meta);
      }
      s.bytes += fill_mbuf<kRssHash>(m, s.rearm, s.meta, s.meta.l3_from_frame, *cqe, 0, len);
      *s.out++ = m;
      if (s.meta.l3_from_frame != kL3FromFrame) return static_cast<unsigned>(cqe + 1 - first);
      continue;
    }
    s.bytes += fill_mbuf<kRssHash, false>(m, s.rearm, s.meta, kL3FromFrame, *cqe, 0, len);
    *s.out++ = m;
  }
  return static_cast<unsigned>(cqe - first);
}

// The vector kernel of `S` (rx_vec.h) on a run; the scalar path has none.
template <RxSimd S, bool kL3FromFrame>
inline RxVecTaken vec_take(const RxVecMeta& m, const hw::Cqe* cqe, rte_mbuf* const* slot,
                           rte_mbuf** out, unsigned n) {
#if defined(__x86_64__)
  if constexpr (S == RxSimd::kSse41) return rx_vec_take_sse<kL3FromFrame>(m, cqe, slot, out, n);
  if constexpr (S == RxSimd::kAvx2) return rx_vec_take_avx2<kL3FromFrame>(m, cqe, slot, out, n);
#elif defined(__aarch64__)
  if constexpr (S == RxSimd::kNeon) return rx_vec_take_neon<kL3FromFrame>(m, cqe, slot, out, n);
#endif
  return {0, 0};
}

// take_run_scalar with the kernel of `S` in front: the kernel takes groups of four common CQEs of
// the current flags; at a group holding anything else, the scalar path takes up to four CQEs (and
// decodes new flags, or stops at the other CQE), then the kernel goes on. Packets whose VLAN tag
// goes back into the frame (meta_key) are the scalar path's alone.
template <RxSimd S, bool kChecksum, bool kRssHash, bool kVlanStrip, bool kL3FromFrame>
inline unsigned take_run(RxQueue& q, FastState& s, const hw::Cqe* const first, rte_mbuf** slot,
                         unsigned run, const hw::Cqe** other) {
  if constexpr (S == RxSimd::kScalar) {
    return take_run_scalar<kChecksum, kRssHash, kVlanStrip, kL3FromFrame>(q, s, first, slot, run,
                                                                          other);
  } else {
    unsigned done = 0;
    for (;;) {
      if (run - done >= 4 && s.key == s.meta.dw1) {
        const RxVecMeta m{s.rearm,   s.meta.ol_flags, s.meta.dw1, s.meta.ptype,
                          s.buf_len, s.meta.vlan_tci, s.owner,    q.frame_offset};
        const RxVecTaken t =
            vec_take<S, kL3FromFrame>(m, first + done, slot + done, s.out, run - done);
        done += t.cqes;
        s.out += t.cqes;
        s.bytes += t.bytes;
      }
      if (done == run) return done;
      const unsigned chunk = RTE_MIN(4u, run - done);
      const unsigned k = take_run_scalar<kChecksum, kRssHash, kVlanStrip, kL3FromFrame>(
          q, s, first + done, slot + done, chunk, other);
      done += k;
      if (k != chunk || *other != nullptr || s.meta.l3_from_frame != kL3FromFrame) return done;
    }
  }
}

// Takes `ready` CQEs while each is the common one, in runs (take_run); the queue's state lives in
// locals meanwhile. Returns the first other CQE, already taken off the CQ, or null.
template <RxSimd S, bool kChecksum, bool kRssHash, bool kVlanStrip>
inline const hw::Cqe* take_fast(RxQueue& q, Burst& b, unsigned ready) {
  const hw::Cqe* const ring = q.cq.ring;
  rte_mbuf** const mbufs = q.mbufs;
  const uint32_t cq_mask = q.cq.mask, desc_mask = q.desc_mask;
  FastState s{q.meta, meta_key(q.meta), q.rearm, b.bytes, b.pkts + b.out, q.buf_len, 0};
  uint32_t head = q.cq.head, tail = q.rq.tail_bu;
  const hw::Cqe* other = nullptr;
  while (ready != 0 && other == nullptr) {
    const hw::Cqe* const first = ring + (head & cq_mask);
    rte_mbuf** slot = mbufs + (tail & desc_mask);
    const unsigned run =
        RTE_MIN(ready, RTE_MIN(cq_mask + 1 - (head & cq_mask), desc_mask + 1 - (tail & desc_mask)));
    if constexpr (S == RxSimd::kAvx2 || S == RxSimd::kSse41)
      s.owner = rx_owner_word(head, q.cq.log2_count, q.rq.id);
    const unsigned done =
        s.meta.l3_from_frame
            ? take_run<S, kChecksum, kRssHash, kVlanStrip, true>(q, s, first, slot, run, &other)
            : take_run<S, kChecksum, kRssHash, kVlanStrip, false>(q, s, first, slot, run, &other);
    head += done + (other != nullptr ? 1 : 0);
    tail += done;
    ready -= done;
  }
  q.cq.head = head;
  q.rq.tail_bu = tail;
  b.out = static_cast<unsigned>(s.out - b.pkts);
  b.bytes = s.bytes;
  return other;
}

// x86, first in a burst: the kernel alone takes groups of four from the CQ's head while they are
// completed common CQEs of the current flags, run after run (where neither the CQ nor the mbuf
// ring wraps; a run's lap is one owner word). It checks each group's owner words itself, so that a
// burst of common CQEs needs neither the poll (cq_ready) nor the run set-up (take_fast); the
// batches after it take what it leaves, as in the other implementations. Packets whose VLAN tag
// goes back into the frame are the scalar path's (meta_key).
template <RxSimd S>
inline void take_vec_first(RxQueue& q, Burst& b) {
#if defined(__x86_64__)
  if constexpr (S == RxSimd::kAvx2 || S == RxSimd::kSse41) {
    const RxMeta& meta = q.meta;
    if (meta.tag_back) return;
    const unsigned want = RTE_MIN(b.budget - b.out, q.rq.head_bu - q.rq.tail_bu);
    const uint32_t cq_mask = q.cq.mask, desc_mask = q.desc_mask;
    uint32_t head = q.cq.head, tail = q.rq.tail_bu;
    RxVecMeta m{q.rearm,   meta.ol_flags, meta.dw1, meta.ptype,
                q.buf_len, meta.vlan_tci, 0,        q.frame_offset};
    unsigned taken = 0;
    while (want - taken >= 4) {
      const unsigned run = RTE_MIN(want - taken, RTE_MIN(cq_mask + 1 - (head & cq_mask),
                                                         desc_mask + 1 - (tail & desc_mask)));
      m.owner = rx_owner_word(head, q.cq.log2_count, q.rq.id);
      const hw::Cqe* const first = q.cq.ring + (head & cq_mask);
      rte_mbuf* const* const slot = q.mbufs + (tail & desc_mask);
      rte_mbuf** const out = b.pkts + b.out + taken;
      const RxVecTaken t = meta.l3_from_frame ? vec_take<S, true>(m, first, slot, out, run)
                                              : vec_take<S, false>(m, first, slot, out, run);
      head += t.cqes;
      tail += t.cqes;
      taken += t.cqes;
      b.bytes += t.bytes;
      if (t.cqes != run) break;
    }
    q.cq.head = head;
    q.rq.tail_bu = tail;
    b.out += taken;
  }
#endif
}

template <RxSimd S, bool kChecksum, bool kRssHash, bool kVlanStrip>
uint16_t rx_burst_inside(RxQueue& q, rte_mbuf** pkts, uint16_t nb_pkts) {
  Burst b{pkts, 0, nb_pkts < kMaxRxBurst ? nb_pkts : kMaxRxBurst, 0, q.partial_cqe, false, false};
  if (__builtin_expect(q.meta.variant != kMetaVariant<kChecksum, kRssHash, kVlanStrip>, 0))
    decode_meta<kChecksum, kRssHash, kVlanStrip>(q, 0);
  bool more = true;
  if (__builtin_expect(q.partial_cqe != nullptr, 0)) {
    q.partial_cqe = nullptr;
    more = rx_cqe_slow<kChecksum, kRssHash, kVlanStrip>(q, b, b.carried, q.partial_next);
  }
  // Batches of ready CQEs, each at most what the budget and the posted WQEs allow (a fast CQE
  // consumes one WQE); a slow CQE ends its batch, so that the next one is sized again. At most one
  // lap of the CQ per burst (CQEs that consume no WQE cost no budget).
  const uint32_t head0 = q.cq.head;
  if constexpr (S == RxSimd::kAvx2 || S == RxSimd::kSse41) {
    if (more) take_vec_first<S>(q, b);
  }
  while (more && q.cq.head - head0 <= q.cq.mask) {
    const unsigned want = RTE_MIN(b.budget - b.out, q.rq.head_bu - q.rq.tail_bu);
    if (want == 0) break;
    const unsigned ready = cq_ready<S>(q, b, want);
    const hw::Cqe* other = take_fast<S, kChecksum, kRssHash, kVlanStrip>(q, b, ready);
    if (other != nullptr)
      more = rx_cqe_slow<kChecksum, kRssHash, kVlanStrip>(q, b, other, 0);
    else if (ready < want && b.misdirected)
      skip_misdirected(q);
    else if (ready < want)
      break;  // the CQ is empty
  }
  if (__builtin_expect(b.overflow, 0)) q.stats.cq_overflows++;
  const ProcessPrivate& pp = process_private_of(q.port_id);
  if (cq_doorbell_due(q.cq)) ring_cq_doorbell(pp.db_page, q.cq, false);
  if (wq_free_bu(q.rq) >= q.free_thresh) refill<S>(q, b, pp);
  q.stats.packets += b.out;
  q.stats.bytes += b.bytes;
  return static_cast<uint16_t>(b.out);
}

// Nothing of the queue is touched unless its gate is open (queue_gate.h). No queue: a secondary
// polls a queue id the primary released (kept_queues.h).
template <RxSimd S, bool kChecksum, bool kRssHash, bool kVlanStrip>
uint16_t rx_burst(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  if (queue == nullptr) return 0;
  RxQueue& q = *static_cast<RxQueue*>(queue);
  if (!gate_enter(q.gate, process_private_of(q.port_id).bursts_open)) return 0;
  const uint16_t n = rx_burst_inside<S, kChecksum, kRssHash, kVlanStrip>(q, pkts, nb_pkts);
  gate_leave(q.gate);
  return n;
}

}  // namespace

uint16_t rx_burst_stopped(void*, rte_mbuf**, uint16_t) { return 0; }

// The eight offload variants of implementation `S`, indexed checksum 4, RSS hash 2, VLAN strip 1.
template <RxSimd S>
constexpr eth_rx_burst_t kRxBursts[8] = {
    rx_burst<S, false, false, false>, rx_burst<S, false, false, true>,
    rx_burst<S, false, true, false>,  rx_burst<S, false, true, true>,
    rx_burst<S, true, false, false>,  rx_burst<S, true, false, true>,
    rx_burst<S, true, true, false>,   rx_burst<S, true, true, true>,
};

eth_rx_burst_t select_rx_burst(uint64_t rx_offloads, RxSimd s) {
  const bool csum = rx_offloads & RTE_ETH_RX_OFFLOAD_CHECKSUM;
  const bool hash = rx_offloads & RTE_ETH_RX_OFFLOAD_RSS_HASH;
  const bool strip = rx_offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
  const unsigned i = (csum ? 4 : 0) | (hash ? 2 : 0) | (strip ? 1 : 0);
  switch (s) {
#if defined(__x86_64__)
    case RxSimd::kSse41:
      return kRxBursts<RxSimd::kSse41>[i];
    case RxSimd::kAvx2:
      return kRxBursts<RxSimd::kAvx2>[i];
#elif defined(__aarch64__)
    case RxSimd::kNeon:
      return kRxBursts<RxSimd::kNeon>[i];
#endif
    default:
      return kRxBursts<RxSimd::kScalar>[i];
  }
}

const uint32_t* rx_supported_ptypes() {
  static const uint32_t ptypes[] = {
      RTE_PTYPE_L2_ETHER,
      RTE_PTYPE_L2_ETHER_VLAN,
      RTE_PTYPE_L3_IPV4_EXT_UNKNOWN,
      RTE_PTYPE_L3_IPV6_EXT_UNKNOWN,
      RTE_PTYPE_L4_TCP,
      RTE_PTYPE_L4_UDP,
      RTE_PTYPE_UNKNOWN,
  };
  return ptypes;
}

}  // namespace mana
