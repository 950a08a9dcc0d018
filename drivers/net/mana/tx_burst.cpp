// TX burst (doc/hardware.md §4.2, §4.3, §4.9, §4.10, §7): reclaim completions, then post one WQE
// per packet until the first one that cannot be sent, with CQE suppression on all but the last, and
// ring the SQ doorbell once. No locks, allocation, division or logging.
#include <cstring>

#include <rte_mbuf.h>

#include "burst.h"
#include "priv.h"
#include "tx_checksum.h"

namespace mana {
namespace {

// The mempool whose memory holds the segment's data (for registration on a cache miss).
inline rte_mempool* data_pool(const rte_mbuf* seg) {
  if (RTE_MBUF_DIRECT(seg)) return seg->pool;
  if (RTE_MBUF_HAS_EXTBUF(seg)) return nullptr;
  return rte_mbuf_from_indirect(const_cast<rte_mbuf*>(seg))->pool;
}

// kMaybeLongOob: some queue of the port has a vPort offset above 255 (long OOB on every WQE).
template <bool kChecksum, bool kMultiSeg, bool kVlan, bool kMaybeLongOob>
uint16_t tx_burst_inside(TxQueue& q, const ProcessPrivate& pp, rte_mbuf** pkts, uint16_t nb_pkts) {
  tx_reclaim(q);
  mr_queue_cache_sync(q.mr, q.priv->mr);

  uint8_t* last_oob = nullptr;
  uint64_t bytes = 0;
  uint16_t sent = 0;
  for (; sent < nb_pkts; sent++) {
    rte_mbuf* m = pkts[sent];
    const uint32_t nseg = m->nb_segs;
    if (nseg > (kMultiSeg ? q.max_sge : 1u)) {
      q.stats.too_many_segs++;
      break;
    }
    const bool vlan = kVlan && (m->ol_flags & RTE_MBUF_F_TX_VLAN);
    // Constant OOB sizes in each arm keep the size arithmetic and the OOB copy free of runtime
    // lengths (no memcpy call per packet).
    const bool long_oob = vlan || (kMaybeLongOob && q.oob.oob_size != hw::kShortOobSize);
    const uint32_t bu = long_oob ? hw::wqe_size_bu(hw::kLongOobSize, nseg)
                                 : hw::wqe_size_bu(hw::kShortOobSize, nseg);
    if (q.desc_head - q.desc_tail > q.desc_mask || wq_free_bu(q.sq) < bu) {
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
      sgl[i] = hw::Sge{addr, lkey, seg->data_len};
    }
    if (i != nseg) {
      q.stats.mr_miss++;
      break;
    }
    hw::TxOob oob;
    if constexpr (kChecksum) {
      if (const SeedResult r = seed_l4_checksum(m); r != SeedResult::kDone) {
        if (r == SeedResult::kHeadersSplit)
          q.stats.csum_headers_split++;
        else
          q.stats.csum_readonly++;
        break;
      }
      oob.s = make_tx_short_oob(q.oob, m->ol_flags, m->l2_len, m->l3_len);
    } else {
      oob.s = hw::TxShortOob{q.oob.dw0, q.oob.dw1};
    }
    set_tx_suppress(oob.s, true);
    const uint32_t start_bu = q.sq.head_bu;
    if (long_oob) {
      oob.l = hw::TxLongOob{0, q.oob.long_dw3, 0, 0};
      if (vlan) {
        set_tx_long_format(oob.s);
        oob.l.dw2 = make_tx_vlan_dw2(m->vlan_tci);
      }
      last_oob = post_wqe(q.sq, &oob, hw::kLongOobSize, sgl, nseg);
    } else {
      last_oob = post_wqe(q.sq, &oob.s, hw::kShortOobSize, sgl, nseg);
    }
    q.descs[q.desc_head & q.desc_mask] = TxDesc{m, static_cast<uint16_t>(bu), 1, start_bu};
    q.desc_head++;
    bytes += m->pkt_len;
  }
  if (sent == 0) return 0;

  // The last WQE of the burst asks for a CQE: it completes every earlier suppressed one.
  hw::TxShortOob last;
  std::memcpy(&last, last_oob, sizeof(last));
  set_tx_suppress(last, false);
  std::memcpy(last_oob, &last, sizeof(last));
  q.descs[(q.desc_head - 1) & q.desc_mask].suppressed = 0;
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
  constexpr uint64_t kCsum =
      RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
  const bool csum = tx_offloads & kCsum;
  const bool multi = tx_offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
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
    const auto* q = static_cast<const TxQueue*>(dev->data->tx_queues[i]);
    if (q != nullptr && q->oob.oob_size != hw::kShortOobSize) long_oob = true;
  }
  return select_tx_burst(dev->data->dev_conf.txmode.offloads, long_oob);
}

}  // namespace mana
