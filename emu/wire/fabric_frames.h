// SPDX-License-Identifier: BSD-3-Clause
// What Azure's vSwitch does with one frame a VF sends (doc/emulator.md, "fabric wire"): the pure
// frame logic of the fabric wire, apart from its shared memory.
#pragma once

#include <array>
#include <cstdint>

namespace mana::emu {

using FabricMac = std::array<uint8_t, 6>;
using FabricIpv4 = std::array<uint8_t, 4>;

// The MAC with which Azure's virtual network answers every ARP request and which is the source
// MAC of the frames a VM receives from it (public reports: untangled.eu, "Networking in Microsoft
// Azure - Part I", 2017).
inline constexpr FabricMac kAzureGatewayMac{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc};

inline constexpr uint16_t kEtherTypeArp = 0x0806;
// An ARP reply in a minimum-size Ethernet frame (60 bytes without FCS).
inline constexpr uint32_t kArpReplyFrameLen = 60;

enum class FabricFrameKind : uint8_t {
  kIpv4Unicast,  // unicast destination MAC, IPv4 header present: routed by destination IP
  kArpRequest,   // Ethernet/IPv4 ARP request: answered by the fabric itself
  kGroup,        // other broadcast or multicast: never reaches a VF (goes to the synthetic NIC)
  kUnroutable,   // too short, IPv6 or another protocol to a unicast MAC: dropped
};

struct FabricFrame {
  FabricFrameKind kind = FabricFrameKind::kUnroutable;
  uint32_t l3_offset = 0;  // after the Ethernet header and an 802.1Q tag
  FabricIpv4 target{};     // IPv4: destination address; ARP: the address asked for
};

// Never reads past `len`.
FabricFrame classify_fabric_frame(const uint8_t* frame, uint32_t len);

// The fabric's answer to the ARP request `request` (classified kArpRequest at `l3_offset`):
// kArpReplyFrameLen bytes into `out`, from the gateway MAC to the requester, telling that the
// address asked for is at the gateway MAC. The reply is untagged.
void build_arp_reply(const uint8_t* request, uint32_t l3_offset, uint8_t* out);

}  // namespace mana::emu
