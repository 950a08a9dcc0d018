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

uint32_t pseudo_sum(const uint8_t* frame, const FrameInfo& info) {
  const uint8_t* ip = frame + info.l3_offset;
  return info.l3 == FrameInfo::L3::kIpv4 ? ipv4_pseudo_sum(ip, info.l4_proto, info.l4_len)
                                         : ipv6_pseudo_sum(ip, info.l4_proto, info.l4_len);
}

bool has_l4(const FrameInfo& info, uint8_t proto, uint32_t min_len) {
  return info.l3 != FrameInfo::L3::kNone && !info.fragment && info.l4_offset != 0 &&
         info.l4_proto == proto && info.l4_len >= min_len;
}

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

uint32_t rx_checksum_flags(const uint8_t* frame, const FrameInfo& info, bool ipv6_ip_ok) {
  using hw::Cqe;
  uint32_t dw1 = 0;
  if (info.l3 == FrameInfo::L3::kIpv4 && info.ipv4_header_ok) {
    const uint8_t* ip = frame + info.l3_offset;
    const bool ok = csum_finish(csum_add(0, ip, ipv4_ihl_bytes(ip))) == 0;
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
