// SPDX-License-Identifier: BSD-3-Clause
#include "device/tso.h"

#include <cstring>

#include "device/offloads.h"
#include "mana/inet_checksum.h"

namespace mana::emu {

namespace {

constexpr uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpCwr = 0x80;

uint32_t load_be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
void store_be32(uint8_t* p, uint32_t v) {
  store_be16(p, static_cast<uint16_t>(v >> 16));
  store_be16(p + 2, static_cast<uint16_t>(v));
}

uint32_t l3_offset(const uint8_t* pkt) {
  return kEthHeaderLen + (has_vlan_tag(pkt) ? kVlanTagLen : 0);
}

uint32_t payload_len(uint32_t len, const TsoRequest& r) {
  return len > r.header_len ? len - r.header_len : 0;
}

}  // namespace

bool tso_headers_ok(const uint8_t* pkt, uint32_t len, const TsoRequest& r) {
  if (r.mss == 0 || r.header_len > len || r.header_len < kEthHeaderLen) return false;
  const uint32_t l3 = l3_offset(pkt);
  const uint32_t t = r.transport_offset;
  if (t < l3 || t + kTcpMinHeaderLen > r.header_len) return false;
  const uint8_t* ip = pkt + l3;
  if (r.is_ipv4) {
    if ((ip[0] >> 4) != 4 || (ip[0] & 0xFu) * 4 != t - l3 || t - l3 < kIpv4MinHeaderLen)
      return false;
  } else if ((ip[0] >> 4) != 6 || t - l3 < kIpv6HeaderLen) {
    return false;
  }
  return t + (pkt[t + 12] >> 4) * 4u == r.header_len;
}

uint32_t tso_segment_count(uint32_t len, const TsoRequest& r) {
  const uint32_t payload = payload_len(len, r);
  return payload == 0 ? 1 : (payload + r.mss - 1) / r.mss;
}

uint32_t tso_max_segment_len(uint32_t len, const TsoRequest& r) {
  const uint32_t payload = payload_len(len, r);
  return r.header_len + (payload < r.mss ? payload : r.mss);
}

uint32_t tso_build_segment(const uint8_t* pkt, uint32_t len, const TsoRequest& r, uint32_t index,
                           uint8_t* out) {
  const uint32_t payload = payload_len(len, r);
  const uint32_t from = index * r.mss;
  const uint32_t n = payload - from < r.mss ? payload - from : r.mss;
  const bool first = index == 0, last = from + n >= payload;
  std::memcpy(out, pkt, r.header_len);
  std::memcpy(out + r.header_len, pkt + r.header_len + from, n);
  const uint32_t seg_len = r.header_len + n;
  const uint32_t l3 = l3_offset(pkt);
  uint8_t* ip = out + l3;
  uint8_t* tcp = out + r.transport_offset;
  const uint32_t tcp_len = seg_len - r.transport_offset;
  if (r.is_ipv4) {
    store_be16(ip + 2, static_cast<uint16_t>(seg_len - l3));
    if (!r.fixed_ip_id) store_be16(ip + 4, static_cast<uint16_t>(load_be16(ip + 4) + index));
    store_be16(ip + 10, ipv4_header_checksum(ip, r.transport_offset - l3));
  } else {
    store_be16(ip + 4, static_cast<uint16_t>(seg_len - l3 - kIpv6HeaderLen));
  }
  store_be32(tcp + 4, load_be32(tcp + 4) + from);
  if (!last) tcp[13] &= static_cast<uint8_t>(~(kTcpFin | kTcpPsh));
  if (!first) tcp[13] &= static_cast<uint8_t>(~kTcpCwr);
  // The field holds the pseudo-header sum without the length: add this segment's TCP length.
  const uint32_t sum = csum_add(tcp_len & 0xFFFF, tcp, tcp_len);
  store_be16(tcp + 16, csum_finish(sum));
  return seg_len;
}

}  // namespace mana::emu
