// SPDX-License-Identifier: BSD-3-Clause
// RNDIS messages carried in NVS RNDIS (107) packets (doc/hardware.md §11.5, §11.6): control
// requests and completions, status indications, and data packets with per-packet info. Checked
// field by field against DPDK 22.11's rndis.h (tests/unit/netvsc_crosscheck).
#pragma once

#include <cstdint>

namespace mana::emu::netvsc::rndis {

inline constexpr uint32_t kPacketMsg = 0x1;
inline constexpr uint32_t kInitMsg = 0x2;
inline constexpr uint32_t kHaltMsg = 0x3;
inline constexpr uint32_t kQueryMsg = 0x4;
inline constexpr uint32_t kSetMsg = 0x5;
inline constexpr uint32_t kResetMsg = 0x6;
inline constexpr uint32_t kIndicateStatusMsg = 0x7;
inline constexpr uint32_t kKeepaliveMsg = 0x8;
inline constexpr uint32_t kCompletionBit = 0x80000000;  // *_CMPLT = request type | this

inline constexpr uint32_t kStatusSuccess = 0;
inline constexpr uint32_t kStatusMediaConnect = 0x4001000B;
inline constexpr uint32_t kStatusMediaDisconnect = 0x4001000C;
inline constexpr uint32_t kStatusNotSupported = 0xC00000BB;
inline constexpr uint32_t kStatusInvalidLength = 0xC0010014;
inline constexpr uint32_t kStatusInvalidData = 0xC0010015;

inline constexpr uint32_t kVersionMajor = 1;
inline constexpr uint32_t kVersionMinor = 0;
inline constexpr uint32_t kDfConnectionless = 1;
inline constexpr uint32_t kMedium8023 = 0;

// Object identifiers the host answers (doc/hardware.md §11.6).
inline constexpr uint32_t kOidGenSupportedList = 0x00010101;
inline constexpr uint32_t kOidGenHardwareStatus = 0x00010102;
inline constexpr uint32_t kOidGenMediaSupported = 0x00010103;
inline constexpr uint32_t kOidGenMediaInUse = 0x00010104;
inline constexpr uint32_t kOidGenMaximumFrameSize = 0x00010106;
inline constexpr uint32_t kOidGenLinkSpeed = 0x00010107;
inline constexpr uint32_t kOidGenVendorId = 0x0001010C;
inline constexpr uint32_t kOidGenCurrentPacketFilter = 0x0001010E;
inline constexpr uint32_t kOidGenMaximumTotalSize = 0x00010111;
inline constexpr uint32_t kOidGenMediaConnectStatus = 0x00010114;
inline constexpr uint32_t kOidGenRssCapabilities = 0x00010203;
inline constexpr uint32_t kOidGenRssParameters = 0x00010204;
inline constexpr uint32_t kOid8023PermanentAddress = 0x01010101;
inline constexpr uint32_t kOid8023CurrentAddress = 0x01010102;
inline constexpr uint32_t kOidTcpOffloadParameters = 0xFC01020C;
inline constexpr uint32_t kOidTcpOffloadHardwareCaps = 0xFC01020D;

inline constexpr uint32_t kMediaStateConnected = 0;
inline constexpr uint32_t kMediaStateDisconnected = 1;

// OID_GEN_CURRENT_PACKET_FILTER bits.
inline constexpr uint32_t kFilterDirected = 0x1;
inline constexpr uint32_t kFilterMulticast = 0x2;
inline constexpr uint32_t kFilterAllMulticast = 0x4;
inline constexpr uint32_t kFilterBroadcast = 0x8;
inline constexpr uint32_t kFilterPromiscuous = 0x20;

// Per-packet info types.
inline constexpr uint32_t kPpiChecksum = 0;
inline constexpr uint32_t kPpiLso = 2;
inline constexpr uint32_t kPpiVlan = 6;
inline constexpr uint32_t kPpiHashValue = 8;
inline constexpr uint32_t kPpiHashInfo = 9;

struct MsgHeader {
  uint32_t type, len;
};
struct PacketMsg {
  uint32_t type, len;
  uint32_t dataoffset, datalen;  // offsets count from `dataoffset`'s own position (byte 8)
  uint32_t oobdataoffset, oobdatalen, oobdataelements;
  uint32_t pktinfooffset, pktinfolen;
  uint32_t vchandle, reserved;
};
inline constexpr uint32_t kPacketOffsetBase = 8;  // offsetof(PacketMsg, dataoffset)
struct PacketInfo {
  uint32_t size, type, offset;  // offset of the data from the start of this record (12)
};
struct InitReq {
  uint32_t type, len, rid, ver_major, ver_minor, max_xfersz;
};
struct InitComp {
  uint32_t type, len, rid, status, ver_major, ver_minor, devflags, medium;
  uint32_t pktmaxcnt, pktmaxsz, align, aflistoffset, aflistsz;
};
struct HaltReq {
  uint32_t type, len, rid;
};
struct QueryReq {  // also SET's request: the info buffer's offset counts from `rid` (byte 8)
  uint32_t type, len, rid, oid, infobuflen, infobufoffset, devicevchdl;
};
struct QueryComp {
  uint32_t type, len, rid, status, infobuflen, infobufoffset;
};
inline constexpr uint32_t kInfoOffsetBase = 8;  // offsetof(QueryReq, rid)
struct SetComp {
  uint32_t type, len, rid, status;
};
struct ResetComp {
  uint32_t type, len, status, adrreset;
};
struct StatusMsg {
  uint32_t type, len, status, stbuflen, stbufoffset;
};

static_assert(sizeof(PacketMsg) == 44 && sizeof(PacketInfo) == 12 && sizeof(InitComp) == 52);
static_assert(sizeof(QueryReq) == 28 && sizeof(QueryComp) == 24 && sizeof(SetComp) == 16);

}  // namespace mana::emu::netvsc::rndis
