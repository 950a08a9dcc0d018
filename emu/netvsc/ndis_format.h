// SPDX-License-Identifier: BSD-3-Clause
// NDIS objects in RNDIS query and set info buffers (doc/hardware.md §11.6): the offload
// capabilities, RSS capabilities and parameters, and the per-packet info values. Checked field by
// field against DPDK 22.11's ndis.h (tests/unit/netvsc_crosscheck).
#pragma once

#include <cstdint>

namespace mana::emu::netvsc::ndis {

inline constexpr uint8_t kObjDefault = 0x80;
inline constexpr uint8_t kObjRssCaps = 0x88;
inline constexpr uint8_t kObjRssParams = 0x89;
inline constexpr uint8_t kObjOffload = 0xa7;

#pragma pack(push, 1)
struct ObjectHeader {
  uint8_t type, rev;
  uint16_t size;
};
struct RssCaps {
  ObjectHeader hdr;
  uint32_t caps, nmsi, nrxr;
  uint16_t nind, pad;
};
#pragma pack(pop)
inline constexpr uint16_t kRssCapsSizeRev2 = 18;  // up to nind, without the pad
inline constexpr uint32_t kRssCapIpv4 = 0x100;    // NDIS_RSS_CAPS_HASH_TYPE_TCP_IPV4
inline constexpr uint32_t kRssCapIpv6 = 0x200;    // NDIS_RSS_CAPS_HASH_TYPE_TCP_IPV6
inline constexpr uint32_t kHashFunctionToeplitz = 0x1;
inline constexpr uint32_t kHashFunctionMask = 0xff;
inline constexpr uint32_t kHashIpv4 = 0x100;
inline constexpr uint32_t kHashTcpIpv4 = 0x200;
inline constexpr uint32_t kHashIpv6 = 0x400;
inline constexpr uint32_t kHashTcpIpv6 = 0x1000;
inline constexpr uint32_t kMaxIndirection = 128;
inline constexpr uint32_t kToeplitzKeySize = 40;

// Natural alignment, as DPDK's (and NDIS's) definition: ndis_indoffset sits at 12.
struct RssParams {
  ObjectHeader hdr;
  uint16_t flags, base_cpu;
  uint32_t hash;
  uint16_t indsize;  // bytes
  uint32_t indoffset;
  uint16_t keysize;
  uint32_t keyoffset;  // both offsets count from the start of this object
  uint32_t cpumaskoffset, cpumaskcnt, cpumaskentsz;
};
inline constexpr uint16_t kRssFlagDisable = 0x10;
inline constexpr uint32_t kRssParamsSizeRev1 = 28;  // up to keyoffset (NDIS 6.0)

struct CsumOffload {
  uint32_t ip4_txenc, ip4_txcsum, ip4_rxenc, ip4_rxcsum;
  uint32_t ip6_txenc, ip6_txcsum, ip6_rxenc, ip6_rxcsum;
};
struct LsoV2Offload {
  uint32_t ip4_encap, ip4_maxsz, ip4_minsg, ip6_encap, ip6_maxsz, ip6_minsg, ip6_opts;
};
// OID_TCP_OFFLOAD_HARDWARE_CAPABILITIES, revision 3 (NDIS 6.30): 156 bytes. The parts the host
// leaves zero (LSOv1, IPsec, RSC, encapsulation) are kept as bytes.
struct Offload {
  ObjectHeader hdr;
  CsumOffload csum;  // at 4
  uint8_t lsov1[16];
  uint8_t ipsecv1[28];
  LsoV2Offload lsov2;   // at 80
  uint32_t flags;       // at 108
  uint8_t ipsecv2[32];  // at 112
  uint8_t rsc[2];
  uint8_t pad[2];
  uint8_t encap[8];
};
static_assert(sizeof(RssCaps) == 20 && sizeof(RssParams) == 40 && sizeof(Offload) == 156);
inline constexpr uint8_t kOffloadRev3 = 3;
inline constexpr uint16_t kOffloadSizeRev1 = 112;  // NDIS 6.0: up to ipsecv2
inline constexpr uint32_t kEncap8023 = 0x2;
inline constexpr uint32_t kTxCsumIp4Opt = 0x001, kTxCsumTcp4Opt = 0x004, kTxCsumTcp4 = 0x010;
inline constexpr uint32_t kTxCsumUdp4 = 0x040, kTxCsumIp4 = 0x100;
inline constexpr uint32_t kTxCsumIp6Ext = 0x001, kTxCsumTcp6Opt = 0x004, kTxCsumTcp6 = 0x010;
inline constexpr uint32_t kTxCsumUdp6 = 0x040;
inline constexpr uint32_t kLsoV2Ip6Ext = 0x001, kLsoV2Tcp6Opt = 0x004;

// Per-packet info values.
inline constexpr uint32_t kTxCsumIpv4 = 0x1, kTxCsumIpv6 = 0x2, kTxCsumTcp = 0x4;
inline constexpr uint32_t kTxCsumUdp = 0x8, kTxCsumIp = 0x10;
inline constexpr uint32_t kTxCsumThoffShift = 16, kTxCsumThoffMask = 0x3ff;
inline constexpr uint32_t kLso2MssMask = 0xfffff, kLso2ThoffShift = 20, kLso2ThoffMask = 0x3ff;
inline constexpr uint32_t kLso2IsIpv6 = 0x80000000;
inline constexpr uint32_t kRxCsumTcpFailed = 0x1, kRxCsumUdpFailed = 0x2, kRxCsumIpFailed = 0x4;
inline constexpr uint32_t kRxCsumTcpOk = 0x8, kRxCsumUdpOk = 0x10, kRxCsumIpOk = 0x20;
// VLAN info: priority bits 0-2, CFI bit 3, VLAN id bits 4-15.
inline constexpr uint32_t vlan_info_to_tci(uint32_t info) {
  return ((info & 0x7) << 13) | (((info >> 3) & 1) << 12) | ((info >> 4) & 0xfff);
}

}  // namespace mana::emu::netvsc::ndis
