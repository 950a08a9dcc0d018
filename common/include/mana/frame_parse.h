// Header parsing of an Ethernet frame: what the emulated NIC (checksums, RSS, VLAN) and the test
// checkers need to know about it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana {

struct FrameInfo {
  uint32_t len = 0;
  bool vlan = false;       // an outer 802.1Q tag follows the source MAC
  uint16_t vlan_tci = 0;
  uint16_t ethertype = 0;  // after any VLAN tag
  uint32_t l3_offset = 0;
  enum class L3 : uint8_t { kNone, kIpv4, kIpv6 } l3 = L3::kNone;
  uint32_t l3_len = 0;       // IP header length (IPv6: 40 + extension headers walked)
  bool ipv4_header_ok = false;  // structurally valid (version, IHL, total length fit the frame)
  bool fragment = false;        // IPv4 MF/offset or IPv6 fragment header
  uint8_t l4_proto = 0;         // 6 TCP, 17 UDP, ...
  uint32_t l4_offset = 0;       // 0 when no L4 header is present (fragments, other protocols)
  uint32_t l4_len = 0;          // bytes from the L4 header to the end of the IP payload
};

// Parses `frame`; never reads past `len`. Returns false for a frame shorter than an Ethernet header.
bool parse_frame(const uint8_t* frame, uint32_t len, FrameInfo* out);

}  // namespace mana
