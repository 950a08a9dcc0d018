// SPDX-License-Identifier: BSD-3-Clause
// Test frames (Ethernet, optional 802.1Q, IPv4/IPv6, TCP/UDP) with correct checksums, built
// independently of the device's offload code.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace mana::emu::test {

using Mac = std::array<uint8_t, 6>;

struct FlowSpec {
  bool ipv6 = false;
  uint8_t proto = 17;             // 6 TCP, 17 UDP, anything else: opaque payload
  std::array<uint8_t, 16> src{};  // first 4 bytes for IPv4
  std::array<uint8_t, 16> dst{};
  uint16_t sport = 0, dport = 0;
  uint32_t payload = 18;  // L4 payload bytes
  std::optional<uint16_t> vlan_tci;
  Mac dst_mac{}, src_mac{};
};

// A TCP/UDP flow between documentation addresses: 198.18.0.1 -> 198.18.0.2 (RFC 2544) or
// 2001:db8::1 -> 2001:db8::2, ports 1000 -> 2000; tests change the fields they care about.
FlowSpec ip_flow(uint8_t proto, bool ipv6, const Mac& src_mac, const Mac& dst_mac);

std::vector<uint8_t> build_frame(const FlowSpec& f);
// A frame of another EtherType (not IP), `len` bytes long.
std::vector<uint8_t> build_non_ip(const Mac& dst, const Mac& src, uint16_t ethertype, uint32_t len);

// Offsets into a frame built without a VLAN tag.
inline constexpr uint32_t kL3 = 14;
uint32_t l4_offset(const FlowSpec& f);  // in the untagged frame
uint32_t l4_checksum_offset(const FlowSpec& f);

// The checksum a correct sender stores in the L4 field (host order of the big-endian field),
// computed over the frame as built (the field itself is treated as zero).
uint16_t expected_l4_checksum(const std::vector<uint8_t>& frame, const FlowSpec& f);
// The pseudo-header seed a driver writes for L4 checksum offload (doc/hardware.md §4.10).
uint16_t pseudo_header_seed(const std::vector<uint8_t>& frame, const FlowSpec& f);

inline uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

}  // namespace mana::emu::test
