// Per-frame offloads of the emulated NIC (spec §4.10): TX checksum completion and VLAN insertion,
// RX VLAN stripping and checksum verification.
#pragma once

#include <cstdint>

#include "mana/frame_parse.h"

namespace mana::emu {

inline constexpr uint32_t kEthHeaderLen = 14;
inline constexpr uint32_t kVlanTagLen = 4;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;

// True when an outer 802.1Q tag follows the source MAC (frame at least 14 bytes).
inline bool has_vlan_tag(const uint8_t* frame) {
  return ((frame[12] << 8) | frame[13]) == kEtherTypeVlan;
}

// Inserts an 802.1Q tag with `tci` after the source MAC; `frame` has room for 4 more bytes.
// Returns the new length.
uint32_t insert_vlan_tag(uint8_t* frame, uint32_t len, uint16_t tci);

// Removes the outer 802.1Q tag of `*frame` in place by moving the MAC addresses forward by 4 bytes;
// `*frame` then points 4 bytes later. Returns the tag's TCI.
uint16_t strip_vlan_tag(uint8_t** frame, uint32_t* len);

struct TxChecksumRequest {
  bool ipv4_header = false;
  bool tcp = false;
  bool udp = false;
};
// Completes the requested checksums in place: IPv4 header checksum (field taken as 0) and the L4
// checksum from the pseudo-header seed the driver wrote into the field. A request that does not
// match the frame's protocols is ignored.
void complete_tx_checksums(uint8_t* frame, const FrameInfo& info, TxChecksumRequest request);

// RX CQE dw1 checksum bits (hw::Cqe::RxIpCsumOk ... RxUdpCsumFail) for a received frame.
uint32_t rx_checksum_flags(const uint8_t* frame, const FrameInfo& info);

}  // namespace mana::emu
