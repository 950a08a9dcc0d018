// SPDX-License-Identifier: BSD-3-Clause
#include "device/offloads.h"

#include <cstring>

#include "mana/gdma_format.h"
#include "mana/inet_checksum.h"

namespace mana::emu {

namespace {

constexpr uint32_t kIpv4ChecksumOffset = 10;
constexpr uint32_t kTcpChecksumOffset = 16;
constexpr uint32_t kUdpChecksumOffset = 6;

uint32_t ipv4_ihl_bytes(const uint8_t* ip) { return (ip[0] & 0xFu) * 4; }

}  // namespace

uint32_t insert_vlan_tag(uint8_t* frame, uint32_t len, uint16_t tci) {
  std::memmove(frame + 12 + kVlanTagLen, frame + 12, len - 12);
  store_be16(frame + 12, kEtherTypeVlan);
  store_be16(frame + 14, tci);
  return len + kVlanTagLen;
}

uint16_t strip_vlan_tag(uint8_t** frame, uint32_t* len) {
  uint8_t* f = *frame;
  const uint16_t tci = static_cast<uint16_t>((f[14] << 8) | f[15]);
  std::memmove(f + kVlanTagLen, f, 12);
  *frame = f + kVlanTagLen;
  *len -= kVlanTagLen;
  return tci;
}

void complete_tx_checksums(uint8_t* frame, uint32_t len, const TxChecksumRequest& r) {
  if (!r.is_ipv4 && !r.is_ipv6) return;
  const uint32_t l3 = kEthHeaderLen + (has_vlan_tag(frame) ? kVlanTagLen : 0);
  if (l3 + (r.is_ipv4 ? kIpv4MinHeaderLen : kIpv6HeaderLen) > len) return;
  uint8_t* ip = frame + l3;
  uint32_t ip_header, ip_end;
  if (r.is_ipv4) {
    ip_header = ipv4_ihl_bytes(ip);
    if (ip_header < kIpv4MinHeaderLen || l3 + ip_header > len) return;
    ip_end = l3 + load_be16(ip + 2);  // total length
    if (r.ipv4_header) store_be16(ip + kIpv4ChecksumOffset, ipv4_header_checksum(ip, ip_header));
  } else {
    ip_header = kIpv6HeaderLen;
    ip_end = l3 + kIpv6HeaderLen + load_be16(ip + 4);  // payload length
  }
  if (ip_end > len) ip_end = len;
  if (!r.tcp && !r.udp) return;
  const uint32_t l4 = r.tcp ? r.transport_offset : l3 + ip_header;
  const uint32_t field = r.tcp ? kTcpChecksumOffset : kUdpChecksumOffset;
  if (l4 + field + 2 > ip_end) return;
  // The field holds the driver's pseudo-header sum: summing the whole L4 segment completes it.
  uint16_t sum = csum_finish(csum_add(0, frame + l4, ip_end - l4));
  if (!r.tcp && sum == 0) sum = 0xFFFF;  // 0 means "no checksum" for UDP
  store_be16(frame + l4 + field, sum);
}

}  // namespace mana::emu
