// SPDX-License-Identifier: BSD-3-Clause
// The header walk of parse_frame (mana/frame_parse.h) as inline functions: parse_frame is this
// walk, and the emulator's per-frame RX path calls it inline. Every read is preceded by a bounds
// check against the frame length (and against the IP payload end for headers inside IP).
#pragma once

#include "mana/frame_parse.h"

namespace mana {
namespace frame_parse_detail {

inline constexpr uint32_t kIpv6FragmentHeaderLen = 8;
// Extension headers walked before giving up: bounds the work on hostile frames.
inline constexpr unsigned kMaxIpv6ExtensionHeaders = 8;

enum : uint8_t {
  kIpv6HopByHop = 0,
  kIpv6Routing = 43,
  kIpv6Fragment = 44,
  kIpv6DestinationOptions = 60,
};

inline uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

// Fills the L4 fields for a TCP or UDP header at `offset` when it fits before `end`.
inline void parse_l4(const uint8_t* frame, uint32_t offset, uint32_t end, FrameInfo* out) {
  const uint32_t avail = end > offset ? end - offset : 0;
  uint32_t header_len = 0;
  if (out->l4_proto == kIpProtoTcp && avail >= kTcpMinHeaderLen) {
    header_len = (frame[offset + 12] >> 4) * 4u;
    if (header_len < kTcpMinHeaderLen || header_len > avail) header_len = 0;
  } else if (out->l4_proto == kIpProtoUdp && avail >= kUdpHeaderLen) {
    header_len = kUdpHeaderLen;
  }
  if (header_len == 0) return;
  out->l4_offset = offset;
  out->l4_len = avail;
  out->l4_header_len = header_len;
}

inline void parse_ipv4(const uint8_t* frame, uint32_t len, FrameInfo* out) {
  const uint32_t l3 = out->l3_offset;
  const uint32_t avail = len - l3;
  if (avail < kIpv4MinHeaderLen || (frame[l3] >> 4) != 4) return;
  out->l3 = FrameInfo::L3::kIpv4;
  const uint32_t header_len = (frame[l3] & 0x0F) * 4u;
  if (header_len < kIpv4MinHeaderLen || header_len > avail) return;
  out->l3_len = header_len;
  out->l4_proto = frame[l3 + 9];
  const uint16_t flags_offset = be16(frame + l3 + 6);
  out->fragment = (flags_offset & 0x3FFF) != 0;  // MF or a fragment offset
  const uint32_t total_len = be16(frame + l3 + 2);
  if (total_len < header_len || total_len > avail) return;
  out->ipv4_header_ok = true;
  if (!out->fragment) parse_l4(frame, l3 + header_len, l3 + total_len, out);
}

inline void parse_ipv6(const uint8_t* frame, uint32_t len, FrameInfo* out) {
  const uint32_t l3 = out->l3_offset;
  if (len - l3 < kIpv6HeaderLen || (frame[l3] >> 4) != 6) return;
  out->l3 = FrameInfo::L3::kIpv6;
  const uint32_t end = l3 + kIpv6HeaderLen + be16(frame + l3 + 4);
  if (end > len) return;
  uint8_t next = frame[l3 + 6];
  uint32_t offset = l3 + kIpv6HeaderLen;
  for (unsigned walked = 0;; ++walked) {
    const bool extension = next == kIpv6HopByHop || next == kIpv6Routing ||
                           next == kIpv6DestinationOptions || next == kIpv6Fragment;
    if (!extension) break;
    // An extension header we cannot walk leaves the header structurally unusable.
    if (walked == kMaxIpv6ExtensionHeaders || end - offset < 8) {
      out->l3_len = offset - l3;
      out->l4_proto = next;
      return;
    }
    if (next == kIpv6Fragment) {
      out->fragment = true;
      out->l4_proto = frame[offset];
      out->l3_len = offset + kIpv6FragmentHeaderLen - l3;
      out->ipv6_header_ok = true;
      return;  // no L4 header is parsed in any fragment, as for IPv4
    }
    const uint32_t ext_len = (frame[offset + 1] + 1u) * 8u;
    if (ext_len > end - offset) {
      out->l3_len = offset - l3;
      out->l4_proto = next;
      return;
    }
    next = frame[offset];
    offset += ext_len;
  }
  out->l3_len = offset - l3;
  out->l4_proto = next;
  out->ipv6_header_ok = true;
  parse_l4(frame, offset, end, out);
}

}  // namespace frame_parse_detail

// parse_frame, inline: the emulator's per-frame RX path keeps FrameInfo in registers.
inline bool parse_frame_inline(const uint8_t* frame, uint32_t len, FrameInfo* out) {
  using namespace frame_parse_detail;
  *out = FrameInfo{};
  out->len = len;
  if (len < kEthHeaderLen) return false;
  out->ethertype = be16(frame + 12);
  out->l3_offset = kEthHeaderLen;
  if (out->ethertype == kEtherTypeVlan && len >= kEthHeaderLen + kVlanTagLen) {
    out->vlan = true;
    out->vlan_tci = be16(frame + 14);
    out->ethertype = be16(frame + 16);
    out->l3_offset = kEthHeaderLen + kVlanTagLen;
  }
  if (out->ethertype == kEtherTypeIpv4)
    parse_ipv4(frame, len, out);
  else if (out->ethertype == kEtherTypeIpv6)
    parse_ipv6(frame, len, out);
  return true;
}

}  // namespace mana
