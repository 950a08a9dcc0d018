// SPDX-License-Identifier: BSD-3-Clause
// Per-frame offloads of the emulated NIC (doc/hardware.md §4.10): TX checksum completion and VLAN
// insertion, RX VLAN stripping and checksum verification.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "mana/frame_parse.h"
#include "mana/gdma_format.h"
#include "mana/inet_checksum.h"

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

namespace offload_detail {

// Whether the one's-complement sum of an IPv4 header (`len` = IHL * 4 bytes) is 0xFFFF, i.e. its
// checksum verifies. Native-order 32-bit words: the sum does not depend on byte order (RFC 1071),
// and 0xFFFF reads the same both ways. Inline: the RX path verifies one header per frame.
inline bool ipv4_header_verifies(const uint8_t* ip, uint32_t len) {
  auto word = [ip](uint32_t at) {
    uint32_t w;
    std::memcpy(&w, ip + at, sizeof(w));
    return uint64_t{w};
  };
  // The 20 bytes every header has, unrolled; then any options.
  uint64_t acc = word(0) + word(4) + word(8) + word(12) + word(16);
  for (uint32_t i = kIpv4MinHeaderLen; i + 4 <= len; i += 4) acc += word(i);
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return acc == 0xFFFF;
}

inline uint32_t pseudo_sum(const uint8_t* frame, const FrameInfo& info) {
  const uint8_t* ip = frame + info.l3_offset;
  return info.l3 == FrameInfo::L3::kIpv4 ? ipv4_pseudo_sum(ip, info.l4_proto, info.l4_len)
                                         : ipv6_pseudo_sum(ip, info.l4_proto, info.l4_len);
}

inline bool has_l4(const FrameInfo& info, uint8_t proto, uint32_t min_len) {
  return info.l3 != FrameInfo::L3::kNone && !info.fragment && info.l4_offset != 0 &&
         info.l4_proto == proto && info.l4_len >= min_len;
}

}  // namespace offload_detail

// RX CQE dw1 checksum bits (hw::Cqe::RxIpCsumOk ... RxUdpCsumFail) for a received frame.
// `ipv6_ip_ok` (hw ipv6-ip-csum): a valid IPv6 header also sets RxIpCsumOk. Inline: per frame.
[[gnu::always_inline]] inline uint32_t rx_checksum_flags(const uint8_t* frame,
                                                         const FrameInfo& info, bool ipv6_ip_ok) {
  using hw::Cqe;
  using namespace offload_detail;
  uint32_t dw1 = 0;
  if (info.l3 == FrameInfo::L3::kIpv4 && info.ipv4_header_ok) {
    const uint8_t* ip = frame + info.l3_offset;
    const bool ok = ipv4_header_verifies(ip, (ip[0] & 0xFu) * 4);
    dw1 = ok ? Cqe::RxIpCsumOk::set(dw1, 1) : Cqe::RxIpCsumFail::set(dw1, 1);
  } else if (ipv6_ip_ok && info.l3 == FrameInfo::L3::kIpv6 && info.ipv6_header_ok) {
    dw1 = Cqe::RxIpCsumOk::set(dw1, 1);  // no header checksum: "ok" means a valid header
  }
  const bool tcp = has_l4(info, kIpProtoTcp, 20);
  const bool udp = has_l4(info, kIpProtoUdp, 8);
  if (!tcp && !udp) return dw1;
  const uint8_t* l4 = frame + info.l4_offset;
  if (udp && info.l3 == FrameInfo::L3::kIpv4 && l4[6] == 0 && l4[7] == 0)
    return dw1;  // IPv4 UDP without a checksum: nothing to verify
  const bool ok = csum_finish(csum_add(pseudo_sum(frame, info), l4, info.l4_len)) == 0;
  if (tcp)
    dw1 = ok ? Cqe::RxTcpCsumOk::set(dw1, 1) : Cqe::RxTcpCsumFail::set(dw1, 1);
  else
    dw1 = ok ? Cqe::RxUdpCsumOk::set(dw1, 1) : Cqe::RxUdpCsumFail::set(dw1, 1);
  return dw1;
}

}  // namespace mana::emu
