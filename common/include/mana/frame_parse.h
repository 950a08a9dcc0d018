// SPDX-License-Identifier: BSD-3-Clause
// Header parsing of an Ethernet frame: what the emulated NIC (checksums, RSS, VLAN) and the test
// checkers need to know about it (doc/hardware.md §4.10).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana {

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;
// Header lengths (fixed, or the minimum where options may follow).
inline constexpr uint32_t kEthHeaderLen = 14;
inline constexpr uint32_t kVlanTagLen = 4;
inline constexpr uint32_t kIpv4MinHeaderLen = 20;
inline constexpr uint32_t kIpv6HeaderLen = 40;
inline constexpr uint32_t kTcpMinHeaderLen = 20;
inline constexpr uint32_t kUdpHeaderLen = 8;

struct FrameInfo {
  uint32_t len = 0;
  bool vlan = false;  // an outer 802.1Q tag follows the source MAC (and fits in the frame)
  uint16_t vlan_tci = 0;
  uint16_t ethertype = 0;  // after any VLAN tag
  uint32_t l3_offset = 0;  // first byte after the Ethernet header and tag (set for any ethertype)
  // kIpv4/kIpv6 only when the ethertype says so and the fixed header (20/40 bytes) is in the
  // frame with the right version, so its addresses may be read.
  enum class L3 : uint8_t { kNone, kIpv4, kIpv6 } l3 = L3::kNone;
  uint32_t l3_len = 0;  // IP header length (IPv6: 40 + extension headers walked); 0 when the
                        // fixed header does not fit in the frame
  bool ipv4_header_ok = false;  // structurally valid (version, IHL, total length fit the frame)
  bool ipv6_header_ok = false;  // version 6, payload length fits the frame, extensions walked
  bool fragment = false;        // IPv4 MF/offset or IPv6 fragment header
  uint8_t l4_proto = 0;         // 6 TCP, 17 UDP, ... (the upper-layer protocol, also for fragments)
  uint32_t l4_offset = 0;       // 0 when no L4 header is present (fragments, other protocols,
                                // TCP/UDP header truncated)
  uint32_t l4_len = 0;          // bytes from the L4 header to the end of the IP payload (0 when no
                                // L4 header); Ethernet padding after the IP payload is excluded
  uint32_t l4_header_len = 0;   // TCP data offset * 4, UDP 8; 0 when no L4 header
};

// Parses `frame`; never reads past `len`. Returns false for a frame shorter than an Ethernet
// header. Only TCP and UDP headers are recognised at L4; IPv6 extension headers walked: hop-by-hop,
// routing, destination options and fragment.
bool parse_frame(const uint8_t* frame, uint32_t len, FrameInfo* out);

}  // namespace mana
