// Decoding of RX completions (spec §4.7, §4.10) into mbuf metadata: packet count of a CQE (okay or
// coalesced), checksum flags, packet type and RSS-hash validity. Pure functions of the CQE so that
// they are unit-tested and inlined into the RX burst.
#pragma once

#include <cstdint>

#include <rte_mbuf_core.h>
#include <rte_mbuf_ptype.h>

#include "mana/gdma_format.h"

namespace mana {

using hw::Cqe;

// Packets reported by a CQE_RX_OKAY or CQE_RX_COALESCED_4 completion: the packet_info entries up to
// the first zero length. Each one consumed one RQ WQE, in order. A completion always consumed at
// least one WQE, so an entry of length 0 in first place still counts (and is dropped as an error).
inline unsigned rx_cqe_packets(const Cqe& cqe) {
  unsigned n = 1;
  while (n < Cqe::kRxMaxPackets && hw::RxPacketInfo::Length::get(cqe.rx_packet(n).dw0) != 0) n++;
  return n;
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
// L3/L4 masks (upstream bug, spec §6.3 item 3).
inline bool rx_hash_valid(uint32_t dw1) {
  return (Cqe::RxHashType::get(dw1) & (hw::kHashL3 | hw::kHashL4)) != 0;
}

// Packet type from what the NIC reports: hash type and checksum-verification bits. Only the ptypes
// listed by rx_supported_ptypes() are ever set.
inline uint32_t rx_packet_type(uint32_t dw1) {
  constexpr uint32_t kV4 = hw::kHashIpv4 | hw::kHashTcpIpv4 | hw::kHashUdpIpv4;
  constexpr uint32_t kV6 = hw::kHashIpv6 | hw::kHashTcpIpv6 | hw::kHashUdpIpv6 | hw::kHashIpv6Ex |
                           hw::kHashTcpIpv6Ex | hw::kHashUdpIpv6Ex;
  constexpr uint32_t kTcp = hw::kHashTcpIpv4 | hw::kHashTcpIpv6 | hw::kHashTcpIpv6Ex;
  constexpr uint32_t kUdp = hw::kHashUdpIpv4 | hw::kHashUdpIpv6 | hw::kHashUdpIpv6Ex;
  const uint32_t hash = Cqe::RxHashType::get(dw1);
  uint32_t ptype = RTE_PTYPE_L2_ETHER;
  if ((hash & kV4) || Cqe::RxIpCsumOk::get(dw1) || Cqe::RxIpCsumFail::get(dw1))
    ptype |= RTE_PTYPE_L3_IPV4_EXT_UNKNOWN;
  else if (hash & kV6)
    ptype |= RTE_PTYPE_L3_IPV6_EXT_UNKNOWN;
  if ((hash & kTcp) || Cqe::RxTcpCsumOk::get(dw1) || Cqe::RxTcpCsumFail::get(dw1))
    ptype |= RTE_PTYPE_L4_TCP;
  else if ((hash & kUdp) || Cqe::RxUdpCsumOk::get(dw1) || Cqe::RxUdpCsumFail::get(dw1))
    ptype |= RTE_PTYPE_L4_UDP;
  return ptype;
}

// The NIC strips the outer 802.1Q tag and reports the VID only (spec §4.10).
inline bool rx_vlan_present(uint32_t dw1) { return Cqe::RxVlanPresent::get(dw1) != 0; }
inline uint16_t rx_vlan_tci(uint32_t dw1) { return static_cast<uint16_t>(Cqe::RxVlanId::get(dw1)); }

// Terminated by RTE_PTYPE_UNKNOWN, as dev_supported_ptypes_get wants it.
const uint32_t* rx_supported_ptypes();

}  // namespace mana
