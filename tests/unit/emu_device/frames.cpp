// SPDX-License-Identifier: BSD-3-Clause
#include "frames.h"

#include <cstring>

#include "mana/inet_checksum.h"

namespace mana::emu::test {

namespace {

uint32_t l3_header_len(const FlowSpec& f) { return f.ipv6 ? 40 : 20; }
uint32_t l4_header_len(const FlowSpec& f) { return f.proto == 6 ? 20 : f.proto == 17 ? 8 : 0; }

}  // namespace

uint32_t l4_offset(const FlowSpec& f) { return kL3 + l3_header_len(f); }
uint32_t l4_checksum_offset(const FlowSpec& f) { return l4_offset(f) + (f.proto == 6 ? 16 : 6); }

FlowSpec ip_flow(uint8_t proto, bool ipv6, const Mac& src_mac, const Mac& dst_mac) {
  FlowSpec f;
  f.proto = proto;
  f.ipv6 = ipv6;
  if (ipv6) {
    f.src = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    f.dst = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  } else {
    f.src = {198, 18, 0, 1};
    f.dst = {198, 18, 0, 2};
  }
  f.sport = 1000;
  f.dport = 2000;
  f.src_mac = src_mac;
  f.dst_mac = dst_mac;
  return f;
}

std::vector<uint8_t> build_frame(const FlowSpec& f) {
  const uint32_t l4_len = l4_header_len(f) + f.payload;
  std::vector<uint8_t> b(kL3 + l3_header_len(f) + l4_len, 0);
  std::memcpy(&b[0], f.dst_mac.data(), 6);
  std::memcpy(&b[6], f.src_mac.data(), 6);
  store_be16(&b[12], f.ipv6 ? 0x86DD : 0x0800);
  uint8_t* ip = &b[kL3];
  if (f.ipv6) {
    ip[0] = 0x60;
    store_be16(ip + 4, static_cast<uint16_t>(l4_len));
    ip[6] = f.proto;
    ip[7] = 64;
    std::memcpy(ip + 8, f.src.data(), 16);
    std::memcpy(ip + 24, f.dst.data(), 16);
  } else {
    ip[0] = 0x45;
    store_be16(ip + 2, static_cast<uint16_t>(20 + l4_len));
    store_be16(ip + 4, 0x1234);
    ip[8] = 64;
    ip[9] = f.proto;
    std::memcpy(ip + 12, f.src.data(), 4);
    std::memcpy(ip + 16, f.dst.data(), 4);
    store_be16(ip + 10, ipv4_header_checksum(ip, 20));
  }
  uint8_t* l4 = &b[l4_offset(f)];
  for (uint32_t i = 0; i < f.payload; ++i)
    l4[l4_header_len(f) + i] = static_cast<uint8_t>(i * 7 + 3);
  if (f.proto == 6 || f.proto == 17) {
    store_be16(l4, f.sport);
    store_be16(l4 + 2, f.dport);
    if (f.proto == 6) {
      l4[12] = 0x50;  // data offset 5 words
      l4[13] = 0x18;
    } else {
      store_be16(l4 + 4, static_cast<uint16_t>(l4_len));
    }
    store_be16(&b[l4_checksum_offset(f)], expected_l4_checksum(b, f));
  }
  if (f.vlan_tci) {
    const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(*f.vlan_tci >> 8),
                            static_cast<uint8_t>(*f.vlan_tci)};
    b.insert(b.begin() + 12, tag, tag + 4);
  }
  return b;
}

std::vector<uint8_t> build_non_ip(const Mac& dst, const Mac& src, uint16_t ethertype,
                                  uint32_t len) {
  std::vector<uint8_t> b(len, 0xA5);
  std::memcpy(&b[0], dst.data(), 6);
  std::memcpy(&b[6], src.data(), 6);
  store_be16(&b[12], ethertype);
  return b;
}

uint16_t expected_l4_checksum(const std::vector<uint8_t>& frame, const FlowSpec& f) {
  std::vector<uint8_t> copy(frame.begin(), frame.end());
  const uint32_t off = l4_offset(f);
  store_be16(&copy[l4_checksum_offset(f)], 0);
  const uint32_t l4_len = static_cast<uint32_t>(copy.size()) - off;
  const uint8_t* ip = &copy[kL3];
  const uint32_t pseudo =
      f.ipv6 ? ipv6_pseudo_sum(ip, f.proto, l4_len) : ipv4_pseudo_sum(ip, f.proto, l4_len);
  uint16_t sum = csum_finish(csum_add(pseudo, &copy[off], l4_len));
  if (f.proto == 17 && sum == 0) sum = 0xFFFF;
  return sum;
}

uint16_t pseudo_header_seed(const std::vector<uint8_t>& frame, const FlowSpec& f) {
  const uint32_t l4_len = static_cast<uint32_t>(frame.size()) - l4_offset(f);
  const uint8_t* ip = &frame[kL3];
  uint32_t s = f.ipv6 ? ipv6_pseudo_sum(ip, f.proto, l4_len) : ipv4_pseudo_sum(ip, f.proto, l4_len);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);  // folded, not complemented
  return static_cast<uint16_t>(s);
}

}  // namespace mana::emu::test
