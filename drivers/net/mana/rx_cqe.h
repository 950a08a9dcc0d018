// SPDX-License-Identifier: BSD-3-Clause
// Decoding of RX completions (doc/hardware.md §4.7, §4.10) into mbuf metadata: packet count of a
// CQE (okay or coalesced), checksum flags, packet type and RSS-hash validity. Pure functions of the
// CQE so that they are unit-tested and inlined into the RX burst.
#pragma once

#include <cstdint>
#include <cstring>

#include <rte_byteorder.h>
#include <rte_mbuf_core.h>
#include <rte_mbuf_ptype.h>

#include "mana/gdma_format.h"

namespace mana {

using hw::Cqe;

// Packets reported by a CQE_RX_OKAY or CQE_RX_COALESCED_4 completion: the packet_info entries up to
// the first zero length. Each one consumed one RQ WQE, in order. A zero length in first place means
// the completion consumed no WQE at all (0 packets), as the Linux driver's mana_process_rx_cqe
// treats it (doc/hardware.md §4.7).
inline unsigned rx_cqe_packets(const Cqe& cqe) {
  if (hw::RxPacketInfo::Length::get(cqe.rx_packet(0).dw0) == 0) return 0;
  unsigned n = 1;
  while (n < Cqe::kRxMaxPackets && hw::RxPacketInfo::Length::get(cqe.rx_packet(n).dw0) != 0) n++;
  return n;
}

// RQ WQEs an RX CQE consumed: the packets of an okay or coalesced CQE, one for a truncated packet,
// none for an object fence, CQE_INVALID or an unknown type (the kernel's mana_process_rx_cqe,
// doc/hardware.md §4.7).
inline unsigned rx_cqe_wqes(const Cqe& cqe) {
  const uint32_t type = cqe.type();
  if (type == hw::kCqeRxOkay || type == hw::kCqeRxCoalesced4) return rx_cqe_packets(cqe);
  return type == hw::kCqeRxTruncated ? 1 : 0;
}

inline uint64_t rx_checksum_flags(uint32_t dw1) {
  uint64_t f = 0;
  if (Cqe::RxIpCsumOk::get(dw1)) f |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
  if (Cqe::RxIpCsumFail::get(dw1)) f |= RTE_MBUF_F_RX_IP_CKSUM_BAD;
  if (Cqe::RxOuterIpCsumFail::get(dw1)) f |= RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD;
  if (Cqe::RxTcpCsumOk::get(dw1) || Cqe::RxUdpCsumOk::get(dw1)) f |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
  if (Cqe::RxTcpCsumFail::get(dw1) || Cqe::RxUdpCsumFail::get(dw1)) f |= RTE_MBUF_F_RX_L4_CKSUM_BAD;
  return f;
}

// The hash is valid when the NIC reports any hash type: a bit test, not equality with the composite
// L3/L4 masks (upstream bug, doc/hardware.md §6.3 item 3).
inline bool rx_hash_valid(uint32_t dw1) {
  return (Cqe::RxHashType::get(dw1) & (hw::kHashL3 | hw::kHashL4)) != 0;
}

// Packet type from what the NIC reports (doc/hardware.md §4.7). A hash type with exactly one NDIS
// bit names L3 and L4 exactly. Composite masks (0x049 any L3, 0x1B6 any L4) and an absent hash
// (RSS off, one-queue table) do not tell IPv4 from IPv6, and neither does the IP-checksum bit (the
// NIC may set it for IPv6 too); the TCP/UDP checksum bits name L4. When the CQE cannot tell the IP
// version, `l3_from_frame` asks the burst to read the EtherType from the frame: the application
// reads that header line anyway, so this moves a cache miss rather than adding one, and it only
// happens on the paths where the CQE is ambiguous.
struct RxPtype {
  uint32_t ptype;
  bool l3_from_frame;
};

inline RxPtype rx_packet_type(uint32_t dw1) {
  constexpr uint32_t kV4 = hw::kHashIpv4 | hw::kHashTcpIpv4 | hw::kHashUdpIpv4;
  constexpr uint32_t kTcp = hw::kHashTcpIpv4 | hw::kHashTcpIpv6 | hw::kHashTcpIpv6Ex;
  constexpr uint32_t kUdp = hw::kHashUdpIpv4 | hw::kHashUdpIpv6 | hw::kHashUdpIpv6Ex;
  const uint32_t hash = Cqe::RxHashType::get(dw1);
  const bool one_bit = hash != 0 && (hash & (hash - 1)) == 0;
  uint32_t ptype = RTE_PTYPE_L2_ETHER;
  if (one_bit)
    ptype |= (hash & kV4) ? RTE_PTYPE_L3_IPV4_EXT_UNKNOWN : RTE_PTYPE_L3_IPV6_EXT_UNKNOWN;
  if ((one_bit && (hash & kTcp)) || Cqe::RxTcpCsumOk::get(dw1) || Cqe::RxTcpCsumFail::get(dw1))
    ptype |= RTE_PTYPE_L4_TCP;
  else if ((one_bit && (hash & kUdp)) || Cqe::RxUdpCsumOk::get(dw1) || Cqe::RxUdpCsumFail::get(dw1))
    ptype |= RTE_PTYPE_L4_UDP;
  return {ptype, !one_bit};
}

// The L3 ptype from the EtherType at `frame` + 12 (the NIC stripped any outer 802.1Q tag); 0 for
// anything else (ARP, a second tag).
inline uint32_t rx_l3_ptype_of_frame(const uint8_t* frame) {
  uint16_t ethertype;  // as on the wire: compared with byte-swapped constants, branch-free
  std::memcpy(&ethertype, frame + 12, sizeof(ethertype));
  const uint32_t v6 = ethertype == rte_cpu_to_be_16(0x86DD) ? RTE_PTYPE_L3_IPV6_EXT_UNKNOWN : 0;
  return ethertype == rte_cpu_to_be_16(0x0800) ? RTE_PTYPE_L3_IPV4_EXT_UNKNOWN : v6;
}

// The NIC strips the outer 802.1Q tag and reports the VID only (doc/hardware.md §4.10).
inline bool rx_vlan_present(uint32_t dw1) { return Cqe::RxVlanPresent::get(dw1) != 0; }
inline uint16_t rx_vlan_tci(uint32_t dw1) { return static_cast<uint16_t>(Cqe::RxVlanId::get(dw1)); }

// Terminated by RTE_PTYPE_UNKNOWN, as dev_supported_ptypes_get wants it.
const uint32_t* rx_supported_ptypes();

}  // namespace mana
