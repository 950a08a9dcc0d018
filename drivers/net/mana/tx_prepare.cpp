// rte_eth_tx_prepare for net_mana (doc/hardware.md §4.3, §4.10): checks each packet's offload
// request against what the NIC and the TX OOB can express, and writes the pseudo-header seeds.
// Returns the number of packets that may be sent; rte_errno tells why the next one may not.
#include <cerrno>

#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "burst.h"
#include "priv.h"
#include "tx_checksum.h"

namespace mana {
namespace {

constexpr uint64_t kSupportedTxFlags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 |
                                       RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK |
                                       RTE_MBUF_F_TX_VLAN;

// 0 or the errno that refuses `m`.
int prepare_one(const TxQueue& q, rte_mbuf* m) {
  const uint64_t f = m->ol_flags;
  if (m->nb_segs > q.max_segs) return EINVAL;
  if (f & RTE_MBUF_F_TX_OFFLOAD_MASK & ~kSupportedTxFlags) return ENOTSUP;  // TSO, tunnels, ...
  const uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
  if (l4 == RTE_MBUF_F_TX_SCTP_CKSUM) return ENOTSUP;
  const bool ip_csum = f & RTE_MBUF_F_TX_IP_CKSUM;
  if (l4 == 0 && !ip_csum) return 0;
  // The OOB needs the IP version with every checksum request (l2_len + l3_len, at most 638, always
  // fits the 10-bit transport offset).
  const bool v4 = f & RTE_MBUF_F_TX_IPV4;
  if (v4 == static_cast<bool>(f & RTE_MBUF_F_TX_IPV6)) return EINVAL;
  if (ip_csum && !v4) return EINVAL;
  const uint32_t min_l3 = v4 ? sizeof(rte_ipv4_hdr) : sizeof(rte_ipv6_hdr);
  static_assert(RTE_LEN2MASK(7, uint32_t) + RTE_LEN2MASK(9, uint32_t) <=
                hw::TxShortOob::TransportOffset::kMask);
  if (m->l2_len < RTE_ETHER_HDR_LEN || m->l3_len < min_l3) return EINVAL;
  return seed_l4_checksum(m) == SeedResult::kDone ? 0 : EINVAL;
}

}  // namespace

// No queue (a secondary's queue id the primary released, kept_queues.h): nothing to check, the
// burst that follows sends nothing.
uint16_t tx_prepare(void* queue, rte_mbuf** pkts, uint16_t nb_pkts) {
  if (queue == nullptr) return nb_pkts;
  const TxQueue& q = *static_cast<const TxQueue*>(queue);
  for (uint16_t i = 0; i < nb_pkts; i++) {
    if (const int err = prepare_one(q, pkts[i]); err != 0) {
      rte_errno = err;
      return i;
    }
  }
  return nb_pkts;
}

}  // namespace mana
