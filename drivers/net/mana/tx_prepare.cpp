// SPDX-License-Identifier: BSD-3-Clause
// rte_eth_tx_prepare for net_mana (doc/hardware.md §4.3, §4.10): checks each packet's offload
// request against what the NIC and the TX OOB can express, and writes the pseudo-header seeds
// (a few adds for IPv4/IPv6, tx_checksum.h).
// Returns the number of packets that may be sent; rte_errno tells why the next one may not.
#include <cerrno>
#include <cstring>

#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "burst.h"
#include "priv.h"
#include "tx_checksum.h"
#include "tx_oob.h"
#include "tx_tso.h"

namespace mana {
namespace {

// The errno rte_eth_tx_prepare reports for each refusal.
constexpr int kRefusalErrno[kTxPrepareRefusalKinds] = {0,      ENOTSUP, EINVAL, EINVAL,
                                                       EINVAL, EINVAL,  EINVAL};

// kPrepareOk or why a TSO packet is refused (doc/hardware.md §4.11): TCP over IPv4 or IPv6, what
// the WQE can carry (tso_fits_wqe), frames the MTU takes, room for the header SGE. Out of line: the
// loop over the common cases keeps its registers.
__attribute__((noinline)) TxPrepareRefusal prepare_tso(const TxQueue& q, rte_mbuf* m,
                                                       uint32_t mtu) {
  const uint64_t f = m->ol_flags;
  if (!q.tso || (f & (kRefusedTxFlags & ~RTE_MBUF_F_TX_TCP_SEG))) return kPrepareUnsupported;
  const uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
  if (l4 != 0 && l4 != RTE_MBUF_F_TX_TCP_CKSUM) return kPrepareBadRequest;
  const bool v4 = f & RTE_MBUF_F_TX_IPV4;
  if (v4 == static_cast<bool>(f & RTE_MBUF_F_TX_IPV6)) return kPrepareBadRequest;
  const uint32_t min_l3 = v4 ? sizeof(rte_ipv4_hdr) : sizeof(rte_ipv6_hdr);
  if (m->l2_len < RTE_ETHER_HDR_LEN || m->l3_len < min_l3 || m->l4_len < sizeof(rte_tcp_hdr))
    return kPrepareBadRequest;
  if (!tso_fits_wqe(m)) return kPrepareTsoBeyondWqe;
  const uint32_t header = tso_header_len(m);
  // Each frame the NIC makes must fit the MTU (the NIC drops the packet otherwise).
  const uint32_t payload = m->pkt_len - header;
  if (m->l3_len + m->l4_len + RTE_MIN(payload, static_cast<uint32_t>(m->tso_segsz)) > mtu)
    return kPrepareTsoAboveMtu;
  const uint32_t sges = m->nb_segs + (m->data_len > header ? 1u : 0u);
  if (m->nb_segs > q.max_segs || sges > q.max_sge) return kPrepareTooManySegs;
  if (tso_fix_headers(m) != SeedResult::kDone) return kPrepareBadRequest;
  m->ol_flags = f | q.seeded_flag;
  return kPrepareOk;
}

// Whether a frame exceeds what the MTU allows on the wire: MTU + 14, + 4 with a VLAN tag in the
// data; the NIC would drop it (CQE_TX_MTU_DROP, doc/hardware.md §9.11).
bool frame_above_mtu(const rte_mbuf* m, uint32_t mtu) {
  uint32_t limit = mtu + RTE_ETHER_HDR_LEN;
  if (m->pkt_len <= limit) return false;
  const bool tag_in_data =
      !(m->ol_flags & RTE_MBUF_F_TX_VLAN) && m->data_len >= RTE_ETHER_HDR_LEN &&
      rte_pktmbuf_mtod(m, const rte_ether_hdr*)->ether_type == RTE_BE16(RTE_ETHER_TYPE_VLAN);
  if (tag_in_data) limit += RTE_VLAN_HLEN;
  return m->pkt_len > limit;
}

// kPrepareOk or why `m` is refused: every rule, for any packet.
TxPrepareRefusal prepare_any(const TxQueue& q, rte_mbuf* m, uint32_t mtu) {
  const uint64_t f = m->ol_flags;
  if (f & RTE_MBUF_F_TX_TCP_SEG) return prepare_tso(q, m, mtu);
  if (m->nb_segs > q.max_segs) return kPrepareTooManySegs;
  if (f & kRefusedTxFlags) return kPrepareUnsupported;  // TSO, tunnels, ...
  if (frame_above_mtu(m, mtu)) return kPrepareFrameAboveMtu;
  const uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
  if (l4 == RTE_MBUF_F_TX_SCTP_CKSUM) return kPrepareUnsupported;
  const bool ip_csum = f & RTE_MBUF_F_TX_IP_CKSUM;
  if (l4 == 0 && !ip_csum) return kPrepareOk;
  // The OOB needs the IP version with every checksum request (l2_len + l3_len, at most 638, always
  // fits the 10-bit transport offset).
  const bool v4 = f & RTE_MBUF_F_TX_IPV4;
  if (v4 == static_cast<bool>(f & RTE_MBUF_F_TX_IPV6)) return kPrepareBadRequest;
  if (ip_csum && !v4) return kPrepareBadRequest;
  const uint32_t min_l3 = v4 ? sizeof(rte_ipv4_hdr) : sizeof(rte_ipv6_hdr);
  static_assert(RTE_LEN2MASK(7, uint32_t) + RTE_LEN2MASK(9, uint32_t) <=
                hw::TxShortOob::TransportOffset::kMask);
  if (m->l2_len < RTE_ETHER_HDR_LEN || m->l3_len < min_l3) return kPrepareBadRequest;
  return seed_l4_checksum(m) == SeedResult::kDone ? kPrepareOk : kPrepareBadRequest;
}

// Any checksum request (L4, IP) or refused flag: what a packet that needs no work has none of.
constexpr uint64_t kRequestOrRefusedFlags =
    RTE_MBUF_F_TX_OFFLOAD_MASK & ~(RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_VLAN);
static_assert((kRefusedTxFlags & ~kRequestOrRefusedFlags) == 0 &&
              (kRequestOrRefusedFlags & (RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_IP_CKSUM)) ==
                  (RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_IP_CKSUM));

// The common cases first: no checksum request; what seed_common_case takes, within `max_frame`
// (MTU + 14). Everything else takes every rule.
inline TxPrepareRefusal prepare_one(const TxQueue& q, rte_mbuf* m, uint32_t mtu,
                                    uint32_t max_frame) {
  const uint64_t f = m->ol_flags;
  // No checksum request and no refused flag in one test (the IP version and VLAN flags alone ask
  // for nothing to check), before the table lookup the requests need.
  if ((f & kRequestOrRefusedFlags) == 0 && m->nb_segs <= q.max_segs && m->pkt_len <= max_frame)
    return kPrepareOk;
  if (seed_common_case(m, f, max_frame - m->pkt_len)) {
    m->ol_flags = f | q.seeded_flag;
    return kPrepareOk;
  }
  return prepare_any(q, m, mtu);
}

// Whether no packet of the burst asks for anything (the burst of an application without TX
// offloads): no checksum request or refused flag, the queue's segments, within the MTU. One pass
// without a branch per packet; any other burst takes the rules packet by packet.
inline bool burst_asks_nothing(const TxQueue& q, rte_mbuf* const* pkts, uint16_t nb_pkts,
                               uint32_t max_frame) {
  uint64_t flags = 0;
  uint32_t over = 0;  // top bit set once a length or a segment count is over its limit
  for (uint16_t i = 0; i < nb_pkts; i++) {
    const rte_mbuf* m = pkts[i];
    flags |= m->ol_flags;
    over |= (max_frame - m->pkt_len) | (q.max_segs - m->nb_segs);
  }
  return (flags & kRequestOrRefusedFlags) == 0 && static_cast<int32_t>(over) >= 0;
}

}  // namespace

// No queue (a queue id never set up, or one the primary released under a secondary,
// kept_queues.h; DPDK 22.11 checks the id only in debug builds): no packet is ready, EINVAL as the
// debug check says (doc/guide.md "Queues at run time").
uint16_t tx_prepare(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  if (queue == nullptr) {
    rte_errno = EINVAL;
    return 0;
  }
  TxQueue& q = *static_cast<TxQueue*>(queue);
  // Read once per call: rte_eth_dev_set_mtu may change it between calls.
  const uint32_t mtu = rte_eth_devices[q.port_id].data->mtu;
  const uint32_t max_frame = mtu + RTE_ETHER_HDR_LEN;
  // A burst whose first packet asks for a checksum goes packet by packet at once.
  if (nb_pkts != 0 && (pkts[0]->ol_flags & kRequestOrRefusedFlags) == 0 &&
      burst_asks_nothing(q, pkts, nb_pkts, max_frame))
    return nb_pkts;
  for (uint16_t i = 0; i < nb_pkts; i++) {
    if (const TxPrepareRefusal r = prepare_one(q, pkts[i], mtu, max_frame); r != kPrepareOk) {
      // Why, for the application (DPDK gives it only the errno): one xstat per reason.
      q.stats.prepare_refused[r]++;
      rte_errno = kRefusalErrno[r];
      return i;
    }
  }
  return nb_pkts;
}

}  // namespace mana
