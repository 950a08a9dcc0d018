// SPDX-License-Identifier: BSD-3-Clause
#include "wire/fabric_frames.h"

#include <cstring>

#include "mana/frame_parse.h"

namespace mana::emu {
namespace {

constexpr uint32_t kArpIpv4Len = 28;  // RFC 826 body for Ethernet/IPv4
constexpr uint16_t kArpHwEthernet = 1;
constexpr uint16_t kArpRequest = 1;
constexpr uint16_t kArpReply = 2;

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
void put_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

bool is_ipv4_arp_request(const uint8_t* arp) {
  return be16(arp) == kArpHwEthernet && be16(arp + 2) == kEtherTypeIpv4 && arp[4] == 6 &&
         arp[5] == 4 && be16(arp + 6) == kArpRequest;
}

}  // namespace

FabricFrame classify_fabric_frame(const uint8_t* frame, uint32_t len) {
  FabricFrame out;
  if (len < kEthHeaderLen) return out;
  uint32_t l3 = kEthHeaderLen;
  uint16_t ethertype = be16(frame + 12);
  if (ethertype == kEtherTypeVlan && len >= kEthHeaderLen + 4) {
    ethertype = be16(frame + 16);
    l3 += 4;
  }
  out.l3_offset = l3;
  const bool group = frame[0] & 1;
  if (ethertype == kEtherTypeArp && len >= l3 + kArpIpv4Len && is_ipv4_arp_request(frame + l3)) {
    out.kind = FabricFrameKind::kArpRequest;
    std::memcpy(out.target.data(), frame + l3 + 24, 4);  // target protocol address
    return out;
  }
  if (group) {
    out.kind = FabricFrameKind::kGroup;
    return out;
  }
  if (ethertype == kEtherTypeIpv4 && len >= l3 + kIpv4MinHeaderLen && (frame[l3] >> 4) == 4) {
    out.kind = FabricFrameKind::kIpv4Unicast;
    std::memcpy(out.target.data(), frame + l3 + 16, 4);
  }
  return out;
}

void build_arp_reply(const uint8_t* request, uint32_t l3_offset, uint8_t* out) {
  const uint8_t* req = request + l3_offset;
  std::memset(out, 0, kArpReplyFrameLen);
  std::memcpy(out, req + 8, 6);  // to the requester's hardware address
  std::memcpy(out + 6, kAzureGatewayMac.data(), 6);
  put_be16(out + 12, kEtherTypeArp);
  uint8_t* arp = out + kEthHeaderLen;
  put_be16(arp, kArpHwEthernet);
  put_be16(arp + 2, kEtherTypeIpv4);
  arp[4] = 6;
  arp[5] = 4;
  put_be16(arp + 6, kArpReply);
  std::memcpy(arp + 8, kAzureGatewayMac.data(), 6);  // sender: the gateway MAC ...
  std::memcpy(arp + 14, req + 24, 4);                // ... for the address asked for
  std::memcpy(arp + 18, req + 8, 6);                 // target: the requester
  std::memcpy(arp + 24, req + 14, 4);
}

}  // namespace mana::emu
