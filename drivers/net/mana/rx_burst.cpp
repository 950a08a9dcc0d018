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

namespace mana {
namespace {

constexpr unsigned kMaxRxBurst = 64;

// One consumed RQ WQE: the CQE that reported it and its packet_info index, or an error.
struct Consumed {
  const hw::Cqe* cqe;
  uint8_t packet;
  bool good;
};

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

// What the mbuf gets from a CQE's dw1. Consecutive packets nearly always share dw1, so the burst
// decodes it only when it changes.
struct RxMeta {
  uint32_t dw1;
  uint32_t ptype;
  bool l3_from_frame;
  uint64_t ol_flags;
  uint16_t vlan_tci;
};

template <bool kChecksum, bool kRssHash, bool kVlanStrip>
void decode_meta(uint32_t dw1, RxMeta* meta) {
  meta->dw1 = dw1;
  const RxPtype pt = rx_packet_type(dw1);
  meta->ptype = pt.ptype;
  meta->l3_from_frame = pt.l3_from_frame;
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
      meta->ptype = (meta->ptype & ~RTE_PTYPE_L2_MASK) | RTE_PTYPE_L2_ETHER_VLAN;
  }
  meta->ol_flags = ol;
  meta->vlan_tci = rx_vlan_tci(dw1);
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

template <bool kChecksum, bool kRssHash, bool kVlanStrip>
void fill_mbuf(const RxQueue& q, rte_mbuf* m, const hw::Cqe& cqe, unsigned k, uint32_t len,
               RxMeta* meta) {
  const uint32_t dw1 = cqe.dw[hw::Cqe::kRxFlagsDword];
  if (dw1 != meta->dw1) decode_meta<kChecksum, kRssHash, kVlanStrip>(dw1, meta);
  m->data_off = RTE_PKTMBUF_HEADROOM;
  m->data_len = static_cast<uint16_t>(len);
  m->pkt_len = len;
  m->port = q.port_id;
  m->packet_type = meta->ptype;
  if (meta->l3_from_frame)
    m->packet_type |= rx_l3_ptype_of_frame(rte_pktmbuf_mtod(m, const uint8_t*));
  m->ol_flags = meta->ol_flags;
  if constexpr (kRssHash) {
    if (meta->ol_flags & RTE_MBUF_F_RX_RSS_HASH) m->hash.rss = cqe.rx_packet(k).packet_hash;
  }
  if (meta->ol_flags & RTE_MBUF_F_RX_VLAN) {
    m->vlan_tci = meta->vlan_tci;
    if constexpr (!kVlanStrip) reinsert_vlan_tag(m, meta->vlan_tci);
  }
}

// Takes completed WQEs off the CQ, in order, until `budget` packets or the CQ is empty.
unsigned collect(RxQueue& q, Consumed* done, unsigned budget, unsigned* good) {
  unsigned n = 0, packets = 0;
  const hw::Cqe* carried = q.partial_cqe;
  while (packets < budget && n < kMaxRxBurst) {
    const hw::Cqe* cqe;
    unsigned k = 0;
    if (q.partial_cqe != nullptr) {
      cqe = q.partial_cqe;
      k = q.partial_next;
      q.partial_cqe = nullptr;
    } else {
      const CqPoll state = cq_peek(q.cq, &cqe);
      if (state != CqPoll::kValid) {
        // The NIC lapped the consumer: the entry is not read and the queue stays stuck; the
        // counter makes that visible (doc/hardware.md §4.5).
        if (state == CqPoll::kOverflow) q.stats.cq_overflows++;
        break;
      }
      q.cq.head++;
    }
    const uint32_t type = cqe->type();
    if (type == hw::kCqeRxOkay || type == hw::kCqeRxCoalesced4) {
      const unsigned count = rx_cqe_packets(*cqe);
      if (count == 0) {  // consumed no RQ WQE: nothing to deliver or recycle
        q.stats.zero_length_cqes++;
        continue;
      }
      for (; k < count && packets < budget && n < kMaxRxBurst; k++) {
        // A length beyond the posted buffer would let the application read past the mbuf: an
        // error, the buffer is reposted (doc/hardware.md §4.7).
        if (hw::RxPacketInfo::Length::get(cqe->rx_packet(k).dw0) > q.buf_len) {
          done[n++] = Consumed{cqe, 0, false};
          q.stats.errors++;
          q.stats.oversize_packets++;
          continue;
        }
        done[n++] = Consumed{cqe, static_cast<uint8_t>(k), true};
        packets++;
      }
      if (k < count) {  // the rest of this CQE goes to the next burst, from a copy
        if (cqe != carried) {
          hw::Cqe* copy = &q.partial_copies[carried == &q.partial_copies[0] ? 1 : 0];
          *copy = *cqe;
          cqe = copy;
        }
        q.partial_cqe = cqe;
        q.partial_next = k;
      }
    } else {
      done[n++] = Consumed{cqe, 0, false};
      q.stats.errors++;
      q.stats.cqe_errors[rx_error_kind(type)]++;
    }
  }
  *good = packets;
  return n;
}

template <bool kChecksum, bool kRssHash, bool kVlanStrip>
uint16_t rx_burst_inside(RxQueue& q, rte_mbuf** pkts, uint16_t nb_pkts) {
  Consumed done[kMaxRxBurst];
  unsigned good;
  const unsigned budget = nb_pkts < kMaxRxBurst ? nb_pkts : kMaxRxBurst;
  const unsigned n = collect(q, done, budget, &good);
  if (cq_doorbell_due(q.cq)) ring_cq_doorbell(process_private_of(q.port_id).db_page, q.cq, false);
  if (n == 0) return 0;

  // Replacement buffers; a packet without one is dropped and its mbuf stays in the ring.
  rte_mbuf* fresh[kMaxRxBurst];
  unsigned got = 0;
  if (good != 0) {
    if (rte_pktmbuf_alloc_bulk(q.mp, fresh, good) == 0) {
      got = good;
    } else {
      while (got < good && (fresh[got] = rte_pktmbuf_alloc(q.mp)) != nullptr) got++;
      q.stats.nombuf += good - got;
    }
  }

  const ProcessPrivate& pp = process_private_of(q.port_id);
  RxMeta meta;
  decode_meta<kChecksum, kRssHash, kVlanStrip>(0, &meta);
  uint16_t out = 0;
  uint64_t bytes = 0;
  unsigned used = 0;
  for (unsigned i = 0; i < n; i++) {
    const uint32_t slot = (q.rq.tail_bu + i) & q.desc_mask;
    rte_mbuf* m = q.mbufs[slot];
    rte_mbuf* repost = m;
    if (done[i].good && used < got) {
      const uint32_t len =
          hw::RxPacketInfo::Length::get(done[i].cqe->rx_packet(done[i].packet).dw0);
      fill_mbuf<kChecksum, kRssHash, kVlanStrip>(q, m, *done[i].cqe, done[i].packet, len, &meta);
      pkts[out++] = m;
      bytes += kVlanStrip ? len : m->pkt_len;  // a re-inserted tag is part of the packet
      repost = fresh[used++];
    }
    post_rx_buffer(q, repost, rx_buffer_lkey(q, repost, pp.registrar));
  }
  q.rq.tail_bu += n;
  ring_rq_doorbell(pp.db_page, q.rq);
  q.stats.packets += out;
  q.stats.bytes += bytes;
  return out;
}

// Nothing of the queue is touched unless its gate is open (queue_gate.h). No queue: a secondary
// polls a queue id the primary released (kept_queues.h).
template <bool kChecksum, bool kRssHash, bool kVlanStrip>
uint16_t rx_burst(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  if (queue == nullptr) return 0;
  RxQueue& q = *static_cast<RxQueue*>(queue);
  if (!gate_enter(q.gate, process_private_of(q.port_id).bursts_open)) return 0;
  const uint16_t n = rx_burst_inside<kChecksum, kRssHash, kVlanStrip>(q, pkts, nb_pkts);
  gate_leave(q.gate);
  return n;
}

}  // namespace

uint16_t rx_burst_stopped(void*, rte_mbuf**, uint16_t) { return 0; }

eth_rx_burst_t select_rx_burst(uint64_t rx_offloads) {
  const bool csum = rx_offloads & RTE_ETH_RX_OFFLOAD_CHECKSUM;
  const bool hash = rx_offloads & RTE_ETH_RX_OFFLOAD_RSS_HASH;
  const bool strip = rx_offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
  static constexpr eth_rx_burst_t table[8] = {
      rx_burst<false, false, false>, rx_burst<false, false, true>, rx_burst<false, true, false>,
      rx_burst<false, true, true>,   rx_burst<true, false, false>, rx_burst<true, false, true>,
      rx_burst<true, true, false>,   rx_burst<true, true, true>,
  };
  return table[(csum ? 4 : 0) | (hash ? 2 : 0) | (strip ? 1 : 0)];
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
