// SPDX-License-Identifier: BSD-3-Clause
// TX burst (doc/hardware.md §4.2, §4.3, §4.9, §4.10, §7): reclaim completions when due, then post
// one WQE per packet until the first one that cannot be sent, with CQE suppression on all but the
// last (and on that one too until tx_rs_thresh packets went without a CQE, unless the SQ could not
// take another WQE), and ring the SQ doorbell once. No locks, allocation, division or logging.
#include <cstring>

#include <rte_mbuf.h>

#include "burst.h"
#include "priv.h"
#include "tx_checksum.h"
#include "tx_tso.h"

namespace mana {
namespace {

// The mempool whose memory holds the segment's data (for registration on a cache miss).
inline rte_mempool* data_pool(const rte_mbuf* seg) {
  if (RTE_MBUF_DIRECT(seg)) return seg->pool;
  if (RTE_MBUF_HAS_EXTBUF(seg)) return nullptr;
  return rte_mbuf_from_indirect(const_cast<rte_mbuf*>(seg))->pool;
}

static_assert(offsetof(TxDesc, bu) == 0 && offsetof(TxDesc, suppressed) == 2 &&
              offsetof(TxDesc, start_bu) == 4 && sizeof(TxDesc) == 8);

inline uint32_t free_descs(const TxQueue& q) {
  return q.desc_mask + 1 - (q.desc_head - q.desc_tail);
}

// The queue-cached MR range covering a segment (registering on a miss); lkey kInvalidLkey if none.
MrRange segment_range(TxQueue& q, const ProcessPrivate& pp, const rte_mbuf* seg, uintptr_t addr) {
  for (const MrRange& r : q.mr.recent)
    if (r.covers(addr, seg->data_len)) return r;
  const uint32_t lkey =
      mr_lookup_slow(q.mr, q.priv->mr, addr, seg->data_len, data_pool(seg), pp.registrar);
  if (lkey == kInvalidLkey) return MrRange{};
  return MrRange{addr, addr + seg->data_len, lkey};
}

// Seeds `m` for an application that did not call tx_prepare. False, counted, if the seed cannot
// be written.
__attribute__((noinline)) bool seed_in_burst(TxQueue& q, rte_mbuf* m) {
  const SeedResult r = seed_l4_checksum(m);
  if (r == SeedResult::kDone) return true;
  if (r == SeedResult::kHeadersSplit)
    q.stats.csum_headers_split++;
  else
    q.stats.csum_readonly++;
  return false;
}

// The checksum request of `m`: seeds it unless tx_prepare did (`seeded`, the queue's flag, cleared
// here: a packet is prepared for one send).
inline bool checksum_ready(TxQueue& q, rte_mbuf* m, uint64_t f, uint64_t seeded) {
  if (f & seeded) {
    m->ol_flags = f ^ seeded;
    return true;
  }
  return seed_in_burst(q, m);
}

// The headers of a TSO packet as the NIC needs them (tx_tso.h), unless tx_prepare did it (its mark
// cleared here). False, counted, for a request the WQE cannot carry or headers it cannot write.
__attribute__((noinline)) bool tso_ready(TxQueue& q, rte_mbuf* m) {
  const uint64_t f = m->ol_flags;
  if (f & q.seeded_flag) {
    m->ol_flags = f & ~q.seeded_flag;
    return true;
  }
  if (!tso_fits_wqe(m)) {
    q.stats.tso_invalid++;
    return false;
  }
  if (tso_fix_headers(m) == SeedResult::kDone) return true;
  q.stats.csum_readonly++;
  return false;
}

// The short OOB of a packet with checksum requests `f`: the queue's words for its flags, and the
// transport offset where the NIC needs it (the TCP checksum bit of the looked-up word).
inline uint64_t checksum_oob(const uint64_t* csum_oob, const rte_mbuf* m, uint64_t f) {
  uint64_t oob = csum_oob[(f >> kTxCsumFlagsShift) & 0x1F];
  if (hw::TxShortOob::TcpCsum::get(static_cast<uint32_t>(oob)))
    oob |= uint64_t{hw::TxShortOob::TransportOffset::set(0, tx_l2_l3_len(m))} << 32;
  return oob;
}

// One short-OOB, one-SGE WQE (four 8-byte words: header, OOB, SGE address, SGE lkey and length)
// and its descriptor (bu 1, suppressed, start_bu: `meta`, one store).
inline void write_short_wqe(uint64_t* w, rte_mbuf** out, TxDesc* d, rte_mbuf* m, uint64_t oob,
                            uintptr_t addr, uint32_t len, uint32_t lkey, uint64_t meta) {
  constexpr hw::WqeHeader kHeader = hw::WqeHeader::make(1, hw::kShortOobSize);
  constexpr uint64_t kHeaderWord = uint64_t{kHeader.dw1} << 32 | kHeader.dw0;
  static_assert(offsetof(hw::Sge, address) == 0 && offsetof(hw::Sge, mem_key) == 8);
  w[0] = kHeaderWord;
  w[1] = oob;
  w[2] = addr;
  auto* sge_keys = reinterpret_cast<uint8_t*>(w + 3);  // lkey, then length (hw::Sge)
  std::memcpy(sge_keys, &lkey, sizeof(lkey));
  std::memcpy(sge_keys + sizeof(lkey), &len, sizeof(len));
  *out = m;
  std::memcpy(d, &meta, sizeof(meta));
}

// Where a run of short WQEs goes: WQEs from `w`, the packets from `in`, their mbuf entries and
// descriptors from `out` and `d`; `meta0` is the first descriptor's.
struct ShortRun {
  uint64_t* w;
  rte_mbuf** in;
  rte_mbuf** out;
  TxDesc* d;
  uint64_t meta0;
  uint32_t length;
};

// Posts the run's packets up to the first that needs a call (several segments, a memory region
// not in `mr`, a checksum tx_prepare did not seed); returns how many it posted. kSeeded: the
// caller seeded the run's packets (seed_unprepared), none of them carries tx_prepare's mark. A
// leaf function of its own: its loop keeps every value in a register, whatever the caller's slow
// paths hold.
template <bool kChecksum, bool kSeeded>
__attribute__((noinline)) uint32_t post_plain_wqes(const ShortRun& r, uint32_t k, uint64_t oob_word,
                                                   const uint64_t* csum_oob, uint64_t seeded,
                                                   MrRange mr, uint64_t* bytes_io) {
  // Locals: the ring stores cannot change them (`r` itself could alias the ring as far as the
  // compiler knows). One index runs from -(packets left) up to 0 over arrays addressed from their
  // ends: the loop's test is its increment's, and no register holds the run's length.
  constexpr size_t kWords = hw::kBasicUnit / sizeof(uint64_t);
  const size_t length = r.length;
  rte_mbuf** const in = r.in + length;
  rte_mbuf** const out = r.out + length;
  TxDesc* const d = r.d + length;
  uint64_t* w = r.w + k * kWords;
  uint64_t meta = r.meta0 + (uint64_t{k} << 32);
  const uintptr_t mr_start = mr.start, mr_end = mr.end;
  const uint32_t lkey = mr.lkey;
  uint64_t bytes = *bytes_io;
  ptrdiff_t i = static_cast<ptrdiff_t>(k) - static_cast<ptrdiff_t>(length);
  for (; i != 0; i++, w += kWords, meta += uint64_t{1} << 32) {
    rte_mbuf* const m = in[i];
    const uintptr_t addr = rte_pktmbuf_mtod(m, uintptr_t);
    const uint32_t len = m->data_len;  // the packet's length: it has one segment
    if (m->nb_segs != 1 || addr < mr_start || addr + len > mr_end) break;
    uint64_t oob = oob_word;
    if constexpr (kChecksum) {
      const uint64_t f = m->ol_flags;
      if constexpr (!kSeeded) {
        if (!(f & seeded)) break;
        m->ol_flags = f ^ seeded;  // prepared for one send
      }
      oob = checksum_oob(csum_oob, m, f);
    }
    write_short_wqe(w, out + i, d + i, m, oob, addr, len, lkey, meta);
    bytes += len;
  }
  *bytes_io = bytes;
  return static_cast<uint32_t>(static_cast<ptrdiff_t>(length) + i);
}

// Seeds the packets tx_prepare did not see, from the first, while each is the common case
// (seed_common_case) or asks for no L4 checksum; stops at the first it cannot take or that carries
// tx_prepare's mark (`seeded`). Returns how many it took. A pass of its own, so that the WQE loop
// keeps its registers.
__attribute__((noinline)) uint32_t seed_unprepared(rte_mbuf* const* pkts, uint32_t n,
                                                   uint64_t seeded) {
  uint32_t i = 0;
  for (; i < n; i++) {
    rte_mbuf* const m = pkts[i];
    const uint64_t f = m->ol_flags;
    if ((f & seeded) != 0) break;
    if ((f & RTE_MBUF_F_TX_L4_MASK) != 0 && !seed_common_case(m, f, 0)) break;
  }
  return i;
}

// Single-segment packets with short OOBs: every WQE is one basic unit (doc/hardware.md §4.3), so
// the room is known up front. The queue's positions live in locals (the ring stores could alias
// the queue) and are written back once. post_plain_wqes takes the packets that need no call, after
// seed_unprepared for those tx_prepare did not see; the packet they stop at takes the general path
// here, then they resume.
template <bool kChecksum>
uint16_t post_short_wqes(TxQueue& q, const ProcessPrivate& pp, rte_mbuf** pkts, uint16_t nb_pkts,
                         bool reclaimed, uint64_t* bytes_out) {
  uint32_t room = RTE_MIN(free_descs(q), wq_free_bu(q.sq));
  if (room < nb_pkts && !reclaimed) {
    tx_reclaim(q);
    room = RTE_MIN(free_descs(q), wq_free_bu(q.sq));
  }
  const uint16_t n = static_cast<uint16_t>(RTE_MIN(room, uint32_t{nb_pkts}));
  uint8_t* const ring = q.sq.ring;
  const uint32_t ring_wqes = (q.sq.size_mask + 1) / hw::kBasicUnit;  // one basic unit each
  const uint32_t desc_mask = q.desc_mask;
  const uint32_t first_bu = q.sq.head_bu;
  const uint32_t first_desc = q.desc_head;
  const uint64_t oob_word =
      (uint64_t{q.oob.dw1} << 32) | hw::TxShortOob::SuppressCqe::set(q.oob.dw0, 1);
  const uint64_t seeded = q.seeded_flag;
  // The queue cache is in step with the port's table (tx_burst synced it): its newest range is
  // the first guess, so a burst from one pool never leaves the leaf loop for a lookup.
  MrRange mr = mr_queue_newest(q.mr);
  uint64_t bytes = 0;
  uint32_t i = 0;
  bool stopped = false;
  // Runs where neither the SQ nor the descriptor ring wraps: one index walks the packets, their
  // mbuf entries and descriptors, a pointer the WQEs.
  while (i < n && !stopped) {
    const uint32_t bu0 = first_bu + i, at = (first_desc + i) & desc_mask;
    const uint32_t wqe0 = bu0 & (ring_wqes - 1);
    const uint32_t run = RTE_MIN(uint32_t{n} - i, RTE_MIN(ring_wqes - wqe0, desc_mask + 1 - at));
    const ShortRun r{reinterpret_cast<uint64_t*>(ring + wqe0 * hw::kBasicUnit),
                     pkts + i,
                     q.mbufs + at,
                     q.descs + at,
                     uint64_t{bu0} << 32 | 1u << 16 | 1u,
                     run};
    constexpr size_t kWords = hw::kBasicUnit / sizeof(uint64_t);
    uint32_t k = 0;
    while (true) {
      k = post_plain_wqes<kChecksum, false>(r, k, oob_word, q.csum_oob.data(), seeded, mr, &bytes);
      if (k == run) break;
      if constexpr (kChecksum) {
        // Packets tx_prepare did not see: their seeds in one pass, then the loop takes them.
        if (const uint32_t done = seed_unprepared(r.in + k, run - k, seeded); done != 0) {
          ShortRun part = r;
          part.length = k + done;
          k = post_plain_wqes<true, true>(part, k, oob_word, q.csum_oob.data(), seeded, mr, &bytes);
          if (k == run) break;
          if (k == part.length) continue;
        }
      }
      // The packet the loop stopped at: several segments, a memory region to look up, or a
      // checksum to seed here.
      rte_mbuf* const m = r.in[k];
      if (m->nb_segs != 1) {
        q.stats.too_many_segs++;
        stopped = true;
        break;
      }
      const uintptr_t addr = rte_pktmbuf_mtod(m, uintptr_t);
      const uint32_t len = m->data_len;
      if (!mr.covers(addr, len)) {
        mr = segment_range(q, pp, m, addr);
        if (mr.lkey == kInvalidLkey) {
          q.stats.mr_miss++;
          stopped = true;
          break;
        }
      }
      uint64_t oob = oob_word;
      if constexpr (kChecksum) {
        const uint64_t f = m->ol_flags;
        if (!checksum_ready(q, m, f, seeded)) {
          stopped = true;
          break;
        }
        oob = checksum_oob(q.csum_oob.data(), m, f);
      }
      write_short_wqe(r.w + k * kWords, r.out + k, r.d + k, m, oob, addr, len, mr.lkey,
                      r.meta0 + (uint64_t{k} << 32));
      bytes += len;
      k++;
    }
    i += k;
  }
  if (i == n && n < nb_pkts) q.stats.ring_full++;
  q.sq.head_bu = first_bu + i;
  q.desc_head = first_desc + i;
  *bytes_out = bytes;
  return i;
}

// Any packet: several segments, long OOBs (VLAN tag, vPort offset above 255).
template <bool kChecksum, bool kMultiSeg, bool kVlan, bool kMaybeLongOob>
uint16_t post_wqes(TxQueue& q, const ProcessPrivate& pp, rte_mbuf** pkts, uint16_t nb_pkts,
                   bool reclaimed, uint64_t* bytes_out) {
  uint64_t bytes = 0;
  uint16_t sent = 0;
  for (; sent < nb_pkts; sent++) {
    rte_mbuf* m = pkts[sent];
    const uint32_t nseg = m->nb_segs;
    // TSO (doc/hardware.md §4.11), only on the multi-segment burst: the headers get an SGE of their
    // own, so the first segment may take two.
    const bool tso = kMultiSeg && (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
    const uint32_t header = tso ? tso_header_len(m) : 0;
    const uint32_t split = tso && m->data_len > header ? 1 : 0;
    const uint32_t nsge = nseg + split;
    if (nsge > (kMultiSeg ? q.max_sge : 1u)) {
      q.stats.too_many_segs++;
      break;
    }
    const bool vlan = kVlan && (m->ol_flags & RTE_MBUF_F_TX_VLAN);
    // Constant OOB sizes in each arm keep the size arithmetic and the OOB copy free of runtime
    // lengths (no memcpy call per packet).
    const bool long_oob = vlan || (kMaybeLongOob && q.oob.oob_size != hw::kShortOobSize);
    const uint32_t bu = long_oob ? hw::wqe_size_bu(hw::kLongOobSize, nsge)
                                 : hw::wqe_size_bu(hw::kShortOobSize, nsge);
    if (free_descs(q) == 0 || wq_free_bu(q.sq) < bu) {
      if (!reclaimed) {
        reclaimed = true;
        tx_reclaim(q);
        sent--;  // try this packet again
        continue;
      }
      q.stats.ring_full++;
      break;
    }
    hw::Sge sgl[kMultiSeg ? hw::kMaxTxSge : 1];
    const rte_mbuf* seg = m;
    uint32_t i = 0;
    for (; i < nseg; i++, seg = seg->next) {
      const uintptr_t addr = rte_pktmbuf_mtod(seg, uintptr_t);
      const uint32_t lkey =
          mr_lookup(q.mr, q.priv->mr, addr, seg->data_len, data_pool(seg), pp.registrar);
      if (lkey == kInvalidLkey) break;
      if (i == 0 && split) {
        sgl[0] = hw::Sge{addr, lkey, header};
        sgl[1] = hw::Sge{addr + header, lkey, seg->data_len - header};
      } else {
        sgl[i + split] = hw::Sge{addr, lkey, seg->data_len};
      }
    }
    if (i != nseg) {
      q.stats.mr_miss++;
      break;
    }
    hw::TxOob oob;
    if (tso) {
      if (!tso_ready(q, m)) break;
      oob.s = make_tx_tso_oob(q.oob, m->ol_flags, m->l2_len, m->l3_len);
    } else if constexpr (kChecksum) {
      const uint64_t f = m->ol_flags;
      if (!checksum_ready(q, m, f, q.seeded_flag)) break;
      oob.s = make_tx_short_oob(q.oob, f, m->l2_len, m->l3_len);
    } else {
      oob.s = hw::TxShortOob{q.oob.dw0, q.oob.dw1};
    }
    set_tx_suppress(oob.s, true);
    const uint32_t start_bu = q.sq.head_bu;
    const uint32_t oob_size = long_oob ? hw::kLongOobSize : hw::kShortOobSize;
    const hw::WqeHeader wqe_header =
        tso ? hw::WqeHeader::make_tso(nsge, oob_size, header, m->tso_segsz)
            : hw::WqeHeader::make(nsge, oob_size);
    if (long_oob) {
      oob.l = hw::TxLongOob{0, q.oob.long_dw3, 0, 0};
      if (vlan) {
        set_tx_long_format(oob.s);
        oob.l.dw2 = make_tx_vlan_dw2(m->vlan_tci);
      }
      post_wqe(q.sq, wqe_header, &oob, hw::kLongOobSize, sgl, nsge);
    } else {
      post_wqe(q.sq, wqe_header, &oob.s, hw::kShortOobSize, sgl, nsge);
    }
    const uint32_t at = q.desc_head & q.desc_mask;
    q.mbufs[at] = m;
    q.descs[at] = TxDesc{static_cast<uint16_t>(bu), 1, start_bu};
    q.desc_head++;
    bytes += m->pkt_len;
  }
  *bytes_out = bytes;
  return sent;
}

// The basic units of the largest WQE this burst variant may post on `q`: every segment the queue
// takes, with the long OOB where this variant may use it (doc/hardware.md §4.3).
template <bool kMultiSeg, bool kVlan, bool kMaybeLongOob>
inline uint32_t largest_wqe_bu(const TxQueue& q) {
  const bool long_oob = kVlan || (kMaybeLongOob && q.oob.oob_size != hw::kShortOobSize);
  return hw::wqe_size_bu(long_oob ? hw::kLongOobSize : hw::kShortOobSize,
                         kMultiSeg ? q.max_sge : 1);
}

// The burst's last WQE asks for a CQE once tx_rs_thresh packets went without one (every burst by
// default), or when the SQ has no room left for a WQE of `largest_bu` basic units: otherwise every
// outstanding WQE could be suppressed with no room for the next one, and nothing would ever
// complete (doc/hardware.md §4.9). That CQE completes every earlier suppressed WQE. The
// single-segment short-OOB burst passes 0: the queue's geometry check (tx_queue.cpp) guarantees a
// basic unit per descriptor, and tx_rs_thresh is below the ring size.
void request_cqe_if_due(TxQueue& q, uint16_t sent, uint32_t largest_bu) {
  const uint32_t since = uint32_t{q.since_cqe} + sent;
  if (since < q.rs_thresh && wq_free_bu(q.sq) >= largest_bu) {
    q.since_cqe = static_cast<uint16_t>(since);
    return;
  }
  q.since_cqe = 0;
  TxDesc& last = q.descs[(q.desc_head - 1) & q.desc_mask];
  last.suppressed = 0;
  uint8_t* oob_at =
      q.sq.ring + ((last.start_bu * hw::kBasicUnit + hw::kDmaOobSize) & q.sq.size_mask);
  hw::TxShortOob oob;
  std::memcpy(&oob, oob_at, sizeof(oob));
  set_tx_suppress(oob, false);
  std::memcpy(oob_at, &oob, sizeof(oob));
}

// Reclaims first when fewer than tx_free_thresh descriptors are free (at every burst by default),
// and always in an empty burst (applications call one to get their mbufs back); a burst that finds
// the ring full reclaims once more.
// kMaybeLongOob: some queue of the port has a vPort offset above 255 (long OOB on every WQE).
template <bool kChecksum, bool kMultiSeg, bool kVlan, bool kMaybeLongOob>
uint16_t tx_burst_inside(TxQueue& q, const ProcessPrivate& pp, rte_mbuf** pkts, uint16_t nb_pkts) {
  const bool reclaim = nb_pkts == 0 || free_descs(q) < q.reclaim_below;
  if (reclaim) tx_reclaim(q);
  if (nb_pkts == 0) return 0;
  mr_queue_cache_sync(q.mr, q.priv->mr);
  uint64_t bytes = 0;
  uint16_t sent;
  if constexpr (!kMultiSeg && !kVlan && !kMaybeLongOob)
    sent = post_short_wqes<kChecksum>(q, pp, pkts, nb_pkts, reclaim, &bytes);
  else
    sent = post_wqes<kChecksum, kMultiSeg, kVlan, kMaybeLongOob>(q, pp, pkts, nb_pkts, reclaim,
                                                                 &bytes);
  if (sent == 0) return 0;
  if constexpr (!kMultiSeg && !kVlan && !kMaybeLongOob)
    request_cqe_if_due(q, sent, 0);
  else
    request_cqe_if_due(q, sent, largest_wqe_bu<kMultiSeg, kVlan, kMaybeLongOob>(q));
  ring_sq_doorbell(pp.db_page, q.sq);
  q.stats.packets += sent;
  q.stats.bytes += bytes;
  return sent;
}

// Nothing of the queue is touched unless its gate is open (queue_gate.h). No queue: a secondary
// polls a queue id the primary released (kept_queues.h).
template <bool kChecksum, bool kMultiSeg, bool kVlan, bool kMaybeLongOob>
uint16_t tx_burst(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  if (queue == nullptr) return 0;
  TxQueue& q = *static_cast<TxQueue*>(queue);
  const ProcessPrivate& pp = process_private_of(q.port_id);
  if (!gate_enter(q.gate, pp.bursts_open)) return 0;
  const uint16_t n =
      tx_burst_inside<kChecksum, kMultiSeg, kVlan, kMaybeLongOob>(q, pp, pkts, nb_pkts);
  gate_leave(q.gate);
  return n;
}

}  // namespace

uint16_t tx_burst_stopped(void*, rte_mbuf**, uint16_t) { return 0; }

eth_tx_burst_t select_tx_burst(uint64_t tx_offloads, bool long_oob) {
  const bool csum = tx_offloads & kTxCsumOffloads;
  const bool multi = tx_offloads & kTxMultiSegOffloads;
  const bool vlan = tx_offloads & RTE_ETH_TX_OFFLOAD_VLAN_INSERT;
#define MANA_TX_BURSTS(l)                                              \
  tx_burst<false, false, false, l>, tx_burst<false, false, true, l>,   \
      tx_burst<false, true, false, l>, tx_burst<false, true, true, l>, \
      tx_burst<true, false, false, l>, tx_burst<true, false, true, l>, \
      tx_burst<true, true, false, l>, tx_burst<true, true, true, l>
  static constexpr eth_tx_burst_t table[16] = {MANA_TX_BURSTS(false), MANA_TX_BURSTS(true)};
#undef MANA_TX_BURSTS
  return table[(long_oob ? 8 : 0) | (csum ? 4 : 0) | (multi ? 2 : 0) | (vlan ? 1 : 0)];
}

eth_tx_burst_t select_port_tx_burst(const rte_eth_dev* dev) {
  bool long_oob = false;
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++) {
    const auto* q = txq_of(dev, i);
    if (q != nullptr && q->oob.oob_size != hw::kShortOobSize) long_oob = true;
  }
  return select_tx_burst(dev->data->dev_conf.txmode.offloads, long_oob);
}

}  // namespace mana
