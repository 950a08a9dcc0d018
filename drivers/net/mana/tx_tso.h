// SPDX-License-Identifier: BSD-3-Clause
// TCP segmentation offload (doc/hardware.md §4.11): the headers the NIC replicates, prepared as the
// Linux driver's mana_start_xmit prepares a GSO packet's, and the OOB of such a WQE. Shared by
// tx_prepare and the TX burst (which prepares only where that is safe, for applications that do not
// call rte_eth_tx_prepare).
#pragma once

#include <cstdint>
#include <cstring>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "mana/gdma_format.h"
#include "tx_checksum.h"
#include "tx_oob.h"

namespace mana {

// The headers SGE 0 carries alone: last_vbytes holds their size in 8 bits.
inline constexpr uint32_t kMaxTsoHeader = hw::WqeHeader::LastVbytes::kMask;
// client_data_unit is 14 bits wide.
inline constexpr uint32_t kMaxTsoMss = hw::WqeHeader::ClientDataUnit::kMask;
// The largest TSO packet: the Linux driver leaves the kernel's default GSO limit (64 KiB) in place,
// so no larger send is known to work.
inline constexpr uint32_t kMaxTsoPacket = 65536;

inline uint32_t tso_header_len(const rte_mbuf* m) { return m->l2_len + m->l3_len + m->l4_len; }

// What the WQE itself can carry: headers in the first segment and within last_vbytes, a payload
// after them, an MSS client_data_unit holds, at most 64 KiB. Checked by tx_prepare and, for packets
// it did not see, by the burst (a value beyond its field would be cut, not refused, by the NIC).
inline bool tso_fits_wqe(const rte_mbuf* m) {
  const uint32_t header = tso_header_len(m);
  return header <= kMaxTsoHeader && header <= m->data_len && header < m->pkt_len &&
         m->tso_segsz != 0 && m->tso_segsz <= kMaxTsoMss && m->pkt_len <= kMaxTsoPacket;
}

// The pseudo-header sum without the length (addresses and protocol 6), as the kernel leaves it in a
// GSO packet's TCP checksum field and as DPDK's TSO convention has it; memory order.
inline uint16_t tso_phdr_seed(const uint8_t* ip, bool v4) {
  uint64_t sum = rte_cpu_to_be_16(uint16_t{IPPROTO_TCP});
  const size_t from = v4 ? offsetof(rte_ipv4_hdr, src_addr) : offsetof(rte_ipv6_hdr, src_addr);
  const size_t to = v4 ? sizeof(rte_ipv4_hdr) : sizeof(rte_ipv6_hdr);
  for (size_t i = from; i < to; i += 4) sum += load32(ip + i);
  return fold_csum(sum);
}

// The headers of a TSO packet as mana_start_xmit leaves a GSO packet's: IPv4 total length and
// header checksum 0, IPv6 payload length 0, the TCP checksum field holding the seed. Writes only
// what differs; the caller checked that the headers are in the first segment.
inline SeedResult tso_fix_headers(rte_mbuf* m) {
  const bool v4 = m->ol_flags & RTE_MBUF_F_TX_IPV4;
  uint8_t* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, m->l2_len);
  const uint16_t seed = tso_phdr_seed(ip, v4);
  const size_t len_at =
      v4 ? offsetof(rte_ipv4_hdr, total_length) : offsetof(rte_ipv6_hdr, payload_len);
  uint8_t* csum = ip + m->l3_len + offsetof(rte_tcp_hdr, cksum);
  uint16_t len, ip_csum = 0, tcp;
  std::memcpy(&len, ip + len_at, sizeof(len));
  if (v4) std::memcpy(&ip_csum, ip + offsetof(rte_ipv4_hdr, hdr_checksum), sizeof(ip_csum));
  std::memcpy(&tcp, csum, sizeof(tcp));
  if (len == 0 && ip_csum == 0 && tcp == seed) return SeedResult::kDone;
  if (!mbuf_data_writable(m)) return SeedResult::kReadOnlyMbuf;
  const uint16_t zero = 0;
  std::memcpy(ip + len_at, &zero, sizeof(zero));
  if (v4) std::memcpy(ip + offsetof(rte_ipv4_hdr, hdr_checksum), &zero, sizeof(zero));
  std::memcpy(csum, &seed, sizeof(seed));
  return SeedResult::kDone;
}

// The short OOB of a TSO WQE, as mana_start_xmit fills it for a GSO packet: the IP version, both
// checksum requests and the transport offset.
inline hw::TxShortOob make_tx_tso_oob(const TxOobTemplate& t, uint64_t ol_flags, uint32_t l2_len,
                                      uint32_t l3_len) {
  using S = hw::TxShortOob;
  uint32_t dw0 = S::TcpCsum::set(S::IpCsum::set(t.dw0, 1), 1);
  dw0 = (ol_flags & RTE_MBUF_F_TX_IPV4) ? S::IsIpv4::set(dw0, 1) : S::IsIpv6::set(dw0, 1);
  return {dw0, S::TransportOffset::set(t.dw1, l2_len + l3_len)};
}

}  // namespace mana
