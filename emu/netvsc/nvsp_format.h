// SPDX-License-Identifier: BSD-3-Clause
// NVSP messages: the first 4 bytes of every VMBus packet body on a synthetic NIC's channels name
// the message (doc/hardware.md §11.3). Layouts are little-endian and packed; every one is checked
// field by field against DPDK 22.11's hn_nvs.h (tests/unit/netvsc_crosscheck).
#pragma once

#include <cstdint>

namespace mana::emu::netvsc::nvsp {

// Protocol versions (INIT), highest first as guests try them.
inline constexpr uint32_t kVersion1 = 0x00002;
inline constexpr uint32_t kVersion2 = 0x30002;
inline constexpr uint32_t kVersion4 = 0x40000;
inline constexpr uint32_t kVersion5 = 0x50000;
inline constexpr uint32_t kVersion6 = 0x60000;
inline constexpr uint32_t kVersion61 = 0x60001;

inline constexpr uint32_t kStatusNone = 0;  // OpenVMM's INIT answer to an unknown version
inline constexpr uint32_t kStatusOk = 1;
inline constexpr uint32_t kStatusFailed = 2;

inline constexpr uint32_t kTypeInit = 1;
inline constexpr uint32_t kTypeInitResp = 2;
inline constexpr uint32_t kTypeNdisInit = 100;
inline constexpr uint32_t kTypeRxbufConn = 101;
inline constexpr uint32_t kTypeRxbufConnResp = 102;
inline constexpr uint32_t kTypeRxbufDisconn = 103;
inline constexpr uint32_t kTypeChimConn = 104;
inline constexpr uint32_t kTypeChimConnResp = 105;
inline constexpr uint32_t kTypeChimDisconn = 106;
inline constexpr uint32_t kTypeRndis = 107;
inline constexpr uint32_t kTypeRndisAck = 108;
inline constexpr uint32_t kTypeNdisConf = 125;
inline constexpr uint32_t kTypeVfAssoc = 128;
inline constexpr uint32_t kTypeSetDatapath = 129;
inline constexpr uint32_t kTypeSubchannel = 133;  // request and response
inline constexpr uint32_t kTypeTxTable = 134;

inline constexpr uint16_t kRxbufSignature = 0xcafe;  // RXBUF_CONN sig, and the RXBUF packets' id
inline constexpr uint16_t kChimneySignature = 0xface;
inline constexpr uint32_t kNoChimneySection = 0xffffffff;
inline constexpr uint32_t kRndisData = 0;  // NVS RNDIS rndis_mtype
inline constexpr uint32_t kRndisControl = 1;
inline constexpr uint64_t kNdisConfSriov = 0x4;
inline constexpr uint64_t kNdisConfVlan = 0x8;
inline constexpr uint32_t kSubchannelAllocate = 1;
inline constexpr uint32_t kDatapathSynthetic = 0;
inline constexpr uint32_t kDatapathVf = 1;

// Message sizes on the wire: the NVSP packet of versions before 6.1 is 28 bytes, from 6.1 on 40
// (OpenVMM protocol.rs PACKET_SIZE_V1 / _V61); replies are padded to it.
inline constexpr uint32_t kPacketSizeV1 = 28;
inline constexpr uint32_t kPacketSizeV61 = 40;

#pragma pack(push, 1)
struct Init {
  uint32_t type, ver_min, ver_max;
  uint8_t rsvd[28];
};
struct InitResp {
  uint32_t type, ver, rsvd, status;
};
struct NdisConf {
  uint32_t type, mtu, rsvd;
  uint64_t caps;
  uint8_t rsvd1[20];
};
struct NdisInit {
  uint32_t type, ndis_major, ndis_minor;
  uint8_t rsvd[28];
};
struct VfAssoc {
  uint32_t type, allocated, serial;
};
struct Datapath {
  uint32_t type, active_path;
  uint8_t rsvd[32];
};
struct BufferConn {  // RXBUF_CONN and CHIM_CONN
  uint32_t type, gpadl;
  uint16_t sig;
  uint8_t rsvd[30];
};
struct RxbufSection {
  uint32_t start, slotsz, slotcnt, end;
};
struct RxbufConnResp {
  uint32_t type, status, nsect;
  RxbufSection sect;
};
struct BufferDisconn {  // RXBUF_DISCONN and CHIM_DISCONN
  uint32_t type;
  uint16_t sig;
  uint8_t rsvd[34];
};
struct ChimConnResp {
  uint32_t type, status, sectsz;
};
struct SubchReq {
  uint32_t type, op, nsubch;
  uint8_t rsvd[28];
};
struct SubchResp {
  uint32_t type, status, nsubch;
  uint8_t rsvd[28];
};
struct Rndis {
  uint32_t type, mtype, chim_idx, chim_sz;
  uint8_t rsvd[24];
};
struct RndisAck {
  uint32_t type, status;
  uint8_t rsvd[32];
};
#pragma pack(pop)

static_assert(sizeof(Init) == 40 && sizeof(InitResp) == 16 && sizeof(NdisConf) == 40);
static_assert(sizeof(RxbufConnResp) == 28 && sizeof(ChimConnResp) == 12 && sizeof(SubchResp) == 40);
static_assert(sizeof(Rndis) == 40 && sizeof(RndisAck) == 40 && sizeof(VfAssoc) == 12);

// The fixed part of a VMBus transfer-page (RXBUF) packet after the 16-byte packet header:
// {u16 xfer_pageset_id (0xcafe), u8 sender_owns, u8 reserved, u32 range_count}, then the ranges
// {u32 len, u32 offset} (doc/hardware.md §11.2).
inline constexpr uint32_t kRxbufPacketFixed = 8;

}  // namespace mana::emu::netvsc::nvsp
