// SPDX-License-Identifier: BSD-3-Clause
// Per-frame offloads of the emulated NIC (doc/hardware.md §4.10): TX checksum completion and VLAN
// insertion, RX VLAN stripping and checksum verification.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "mana/frame_parse.h"
#include "mana/gdma_format.h"

namespace mana::emu {

// Big-endian (network order) header fields.
inline uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// True when an outer 802.1Q tag follows the source MAC (frame at least 14 bytes).
inline bool has_vlan_tag(const uint8_t* frame) {
  return ((frame[12] << 8) | frame[13]) == kEtherTypeVlan;
}

// True when the 6 bytes at `p` are `mac`: two loads (a 6-byte memcmp is a libc call per frame).
inline bool same_mac(const uint8_t* p, const std::array<uint8_t, 6>& mac) {
  uint32_t a, b;
  uint16_t c, d;
  std::memcpy(&a, p, 4);
  std::memcpy(&b, mac.data(), 4);
  std::memcpy(&c, p + 4, 2);
  std::memcpy(&d, mac.data() + 4, 2);
  return a == b && c == d;
}

// Inserts an 802.1Q tag with `tci` after the source MAC; `frame` has room for 4 more bytes.
// Returns the new length.
uint32_t insert_vlan_tag(uint8_t* frame, uint32_t len, uint16_t tci);

// The TCI a long OOB asks to insert (PCP, DEI, VID).
inline uint16_t tx_vlan_tci(const hw::TxLongOob& l) {
  using L = hw::TxLongOob;
  return static_cast<uint16_t>((L::Pcp::get(l.dw2) << 13) | (L::Dei::get(l.dw2) << 12) |
                               L::Vid::get(l.dw2));
}

// Removes the outer 802.1Q tag of `*frame` in place by moving the MAC addresses forward by 4 bytes;
// `*frame` then points 4 bytes later. Returns the tag's TCI.
uint16_t strip_vlan_tag(uint8_t** frame, uint32_t* len);

// What a TX OOB asks for (doc/hardware.md §4.3, §4.10). The NIC finds the headers from the OOB,
// not by parsing: L3 right after the Ethernet header (and a tag in the data), TCP at
// `transport_offset`, UDP right after the IP header (IPv4 IHL, IPv6 fixed 40 bytes; the kernel and
// DPDK set no transport offset for UDP).
struct TxChecksumRequest {
  bool ipv4_header = false;
  bool tcp = false;
  bool udp = false;
  bool is_ipv4 = false;  // the OOB's is_outer_ipv4 / is_outer_ipv6 bits
  bool is_ipv6 = false;
  uint32_t transport_offset = 0;  // bytes from the frame start (TCP)
};
// Completes the requested checksums in place: IPv4 header checksum (field taken as 0) and the L4
// checksum over the segment up to the end of the IP payload, whose field holds the driver's
// pseudo-header seed. Without an IPv4/IPv6 bit nothing is computed (the NIC does not know the L3
// protocol); with wrong offsets the checksum is wrong, as on hardware. Never touches memory past
// `len`.
void complete_tx_checksums(uint8_t* frame, uint32_t len, const TxChecksumRequest& request);

// RX CQE dw1 checksum bits (hw::Cqe::RxIpCsumOk ... RxUdpCsumFail) for a received frame.
// `ipv6_ip_ok` (hw ipv6-ip-csum): a valid IPv6 header also sets RxIpCsumOk.
uint32_t rx_checksum_flags(const uint8_t* frame, const FrameInfo& info, bool ipv6_ip_ok);

}  // namespace mana::emu
