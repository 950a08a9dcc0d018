// The pseudo-header seed of TX L4 checksum offload (doc/hardware.md §4.10): the NIC completes the
// checksum from the sum the driver leaves in the TCP/UDP checksum field, as with Linux's
// CHECKSUM_PARTIAL. Shared by tx_prepare (which seeds) and the TX burst (which seeds only where
// that is safe, for applications that do not call rte_eth_tx_prepare).
#pragma once

#include <cstddef>
#include <cstdint>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

namespace mana {

enum class SeedResult : uint8_t {
  kDone,          // the field holds the seed (or no L4 checksum was asked for)
  kHeadersSplit,  // the checksum field is not in the first segment
  kReadOnlyMbuf,  // the field needs the seed but the data is shared (refcnt > 1, indirect, extbuf)
};

// Data another mbuf may also see must not be written (a clone's or an attached buffer's).
inline bool mbuf_data_writable(const rte_mbuf* m) {
  return RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1;
}

// Writes the pseudo-header sum into the L4 checksum field when it is not already there. The IP
// header precedes the field, so it is in the first segment whenever the field is.
inline SeedResult seed_l4_checksum(rte_mbuf* m) {
  const uint64_t f = m->ol_flags;
  const uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
  const bool tcp = l4 == RTE_MBUF_F_TX_TCP_CKSUM;
  if (!tcp && l4 != RTE_MBUF_F_TX_UDP_CKSUM) return SeedResult::kDone;
  const uint32_t field = m->l2_len + m->l3_len +
                         (tcp ? offsetof(rte_tcp_hdr, cksum) : offsetof(rte_udp_hdr, dgram_cksum));
  if (field + sizeof(uint16_t) > m->data_len) return SeedResult::kHeadersSplit;
  uint16_t sum;
  if (f & RTE_MBUF_F_TX_IPV4)
    sum = rte_ipv4_phdr_cksum(rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr*, m->l2_len), f);
  else if (f & RTE_MBUF_F_TX_IPV6)
    sum = rte_ipv6_phdr_cksum(rte_pktmbuf_mtod_offset(m, const rte_ipv6_hdr*, m->l2_len), f);
  else
    return SeedResult::kDone;  // no IP version: tx_prepare refuses it, the burst sends it as is
  auto* p = rte_pktmbuf_mtod_offset(m, unaligned_uint16_t*, field);
  if (*p == sum) return SeedResult::kDone;
  if (!mbuf_data_writable(m)) return SeedResult::kReadOnlyMbuf;
  *p = sum;
  return SeedResult::kDone;
}

}  // namespace mana
