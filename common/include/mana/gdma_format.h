// SPDX-License-Identifier: BSD-3-Clause
// MANA (GDMA) data-path formats of doc/hardware.md §4: WQEs, OOBs, SGEs, CQEs and doorbells.
//
// Each hardware structure is a plain type of little-endian 32-bit words with typed accessors, so
// the byte layout is explicit (no compiler-dependent bit-field allocation) and checked by
// static_asserts. Shared by the PMD (producer of WQEs, consumer of CQEs) and the emulator (the
// opposite roles).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace mana::hw {

static_assert(std::endian::native == std::endian::little,
              "MANA structures are little-endian and mapped in place");

// ---- geometry (doc/hardware.md §4.1, §6.1)
// -------------------------------------------------------------------
inline constexpr uint32_t kBasicUnit = 32;  // WQE granule
inline constexpr uint32_t kMaxSqeSize = 512;
inline constexpr uint32_t kMaxRqeSize = 256;
inline constexpr uint32_t kMaxTxSge = 30;
inline constexpr uint32_t kMaxRxSge = 15;
inline constexpr uint32_t kCqeSize = 64;
inline constexpr uint32_t kShortOobSize = 8;
inline constexpr uint32_t kLongOobSize = 24;
inline constexpr uint32_t kDmaOobSize = 8;
inline constexpr uint32_t kSgeSize = 16;
inline constexpr uint32_t kRssKeySize = 40;
inline constexpr uint32_t kRssTableSize = 64;
inline constexpr uint32_t kQueueIdMask = 0xFFFFFF;

constexpr uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) & ~(a - 1); }

// Bytes of a WQE with `client_oob` (8 or 24) bytes of inline OOB and `num_sge` SGEs; an empty SGL
// still occupies one (dummy) SGE.
constexpr uint32_t wqe_size(uint32_t client_oob, uint32_t num_sge) {
  return align_up(kDmaOobSize + client_oob + kSgeSize * (num_sge ? num_sge : 1), kBasicUnit);
}
constexpr uint32_t wqe_size_bu(uint32_t client_oob, uint32_t num_sge) {
  return wqe_size(client_oob, num_sge) / kBasicUnit;
}
// The OOB size a driver asks for is rounded to the only two the hardware knows.
constexpr uint32_t client_oob_size(uint32_t requested) {
  return requested > kShortOobSize ? kLongOobSize : kShortOobSize;
}

// A field of `Width` bits starting at bit `Lo` of a 32-bit word.
template <unsigned Lo, unsigned Width>
struct Field {
  static_assert(Lo + Width <= 32);
  static constexpr uint32_t kMask = Width == 32 ? 0xFFFFFFFFu : ((1u << Width) - 1u);
  static constexpr uint32_t get(uint32_t w) { return (w >> Lo) & kMask; }
  static constexpr uint32_t set(uint32_t w, uint32_t v) {
    return (w & ~(kMask << Lo)) | ((v & kMask) << Lo);
  }
};

// ---- WQE header: the 8-byte GDMA DMA OOB (doc/hardware.md §4.2)
// ---------------------------------------------
struct WqeHeader {
  uint32_t dw0;  // last_vbytes (TSO WQEs: SGE 0's size, doc/hardware.md §4.11), else 0
  uint32_t dw1;
  using LastVbytes = Field<24, 8>;  // dw0
  using NumSge = Field<0, 8>;
  using OobDwords = Field<8, 3>;
  using ClientOobInSgl = Field<11, 1>;
  using ClientDataUnit = Field<16, 14>;

  static constexpr WqeHeader make(uint32_t num_sge, uint32_t client_oob) {
    return {0, OobDwords::set(NumSge::set(0, num_sge), client_oob / 4)};
  }
  constexpr uint32_t num_sge() const { return NumSge::get(dw1); }
  constexpr uint32_t oob_bytes() const { return OobDwords::get(dw1) * 4; }
  // The GSO form of mana_start_xmit (doc/hardware.md §4.11): the headers alone in SGE 0, whose
  // size goes in last_vbytes with client_oob_in_sgl, and the MSS in client_data_unit.
  static constexpr WqeHeader make_tso(uint32_t num_sge, uint32_t client_oob, uint32_t header_len,
                                      uint32_t mss) {
    const WqeHeader h = make(num_sge, client_oob);
    return {LastVbytes::set(0, header_len),
            ClientDataUnit::set(ClientOobInSgl::set(h.dw1, 1), mss)};
  }
};
static_assert(sizeof(WqeHeader) == kDmaOobSize);

// ---- scatter-gather element (doc/hardware.md §4.2)
// ----------------------------------------------------------
struct Sge {
  uint64_t address;  // process virtual address
  uint32_t mem_key;  // lkey
  uint32_t size;
};
static_assert(sizeof(Sge) == kSgeSize);
static_assert(offsetof(Sge, mem_key) == 8 && offsetof(Sge, size) == 12);
// The SGE written when a WQE carries no data (num_sge stays 0).
inline constexpr Sge kDummySge{1, 0, 0};

// ---- TX client OOB (doc/hardware.md §4.3)
// -------------------------------------------------------------------
enum class PacketFormat : uint32_t { kShort = 0, kLong = 1 };

struct TxShortOob {
  uint32_t dw0;
  uint32_t dw1;
  using Format = Field<0, 2>;
  using IsIpv4 = Field<2, 1>;
  using IsIpv6 = Field<3, 1>;
  using IpCsum = Field<4, 1>;
  using TcpCsum = Field<5, 1>;
  using UdpCsum = Field<6, 1>;
  using SuppressCqe = Field<7, 1>;
  using VcqNumber = Field<8, 24>;
  using TransportOffset = Field<0, 10>;  // dw1
  using VsqFrame = Field<10, 14>;        // dw1: SQ id bits [23:10]
  using VportOffset = Field<24, 8>;      // dw1
};
static_assert(sizeof(TxShortOob) == kShortOobSize);

struct TxLongOob {  // bytes 8..23 of a 24-byte OOB
  uint32_t dw2;
  uint32_t dw3;
  uint32_t dw4;
  uint32_t dw5;
  using InjectVlan = Field<3, 1>;  // dw2
  using Pcp = Field<16, 3>;
  using Dei = Field<19, 1>;
  using Vid = Field<20, 12>;
  using LongVportOffset = Field<16, 12>;  // dw3
};
static_assert(sizeof(TxLongOob) == 16);

struct TxOob {
  TxShortOob s;
  TxLongOob l;
};
static_assert(sizeof(TxOob) == kLongOobSize);
static_assert(offsetof(TxOob, l) == 8);

constexpr uint32_t vsq_frame_of(uint32_t sq_id) { return (sq_id >> 10) & 0x3FFF; }

// ---- completion queue entry (doc/hardware.md §4.5, §4.7)
// ----------------------------------------------------
enum CqeType : uint32_t {
  kCqeInvalid = 0,
  kCqeRxOkay = 1,
  kCqeRxCoalesced4 = 2,
  kCqeRxObjectFence = 3,
  kCqeRxTruncated = 4,
  kCqeTxOkay = 32,
  kCqeTxSaDrop = 33,
  kCqeTxMtuDrop = 34,
  kCqeTxInvalidOob = 35,
  kCqeTxInvalidEthType = 36,
  kCqeTxHdrProcessingError = 37,
  kCqeTxVfDisabled = 38,
  kCqeTxVportIdxOutOfRange = 39,
  kCqeTxVportDisabled = 40,
  kCqeTxVlanTaggingViolation = 41,
};
inline constexpr uint32_t kCqeTypeCount = 42;
inline constexpr uint32_t kClientTypeCompletion = 1;

// Vendor error codes the emulator reports with error CQEs (doc/hardware.md §6.4 recommendation).
inline constexpr uint32_t kVendorErrAddrRange = 0x207;

struct RxPacketInfo {
  uint32_t dw0;  // [15:0] packet_length
  uint32_t reserved;
  uint32_t packet_hash;
  using Length = Field<0, 16>;
};
static_assert(sizeof(RxPacketInfo) == 12);

struct Cqe {
  uint32_t dw[16];

  // dw0: CQE header, common to TX and RX
  using Type = Field<0, 6>;
  using ClientType = Field<6, 2>;
  using VendorErr = Field<8, 24>;
  // dw15: queue binding and owner bits
  using WqNum = Field<0, 24>;
  using IsSq = Field<24, 1>;
  using Owner = Field<29, 3>;
  // RX dw1
  using RxVlanId = Field<0, 12>;
  using RxVlanPresent = Field<12, 1>;
  using RxOuterIpCsumOk = Field<13, 1>;
  using RxOuterIpCsumFail = Field<14, 1>;
  using RxHashType = Field<16, 9>;
  using RxIpCsumOk = Field<25, 1>;
  using RxIpCsumFail = Field<26, 1>;
  using RxTcpCsumOk = Field<27, 1>;
  using RxTcpCsumFail = Field<28, 1>;
  using RxUdpCsumOk = Field<29, 1>;
  using RxUdpCsumFail = Field<30, 1>;
  // TX dw2
  using TxSglOffset = Field<0, 5>;
  using TxWqeOffset = Field<5, 27>;

  static constexpr unsigned kRxFlagsDword = 1;
  static constexpr unsigned kRxPacketInfoDword = 2;  // 4 entries of 3 dwords
  static constexpr unsigned kRxWqeOffsetDword = 14;
  static constexpr unsigned kTxDataOffsetDword = 1;
  static constexpr unsigned kTxWqeOffsetDword = 2;
  static constexpr unsigned kOwnerDword = 15;
  static constexpr unsigned kRxMaxPackets = 4;

  uint32_t type() const { return Type::get(dw[0]); }
  uint32_t owner() const { return Owner::get(dw[kOwnerDword]); }
  const RxPacketInfo& rx_packet(unsigned k) const {
    return reinterpret_cast<const RxPacketInfo*>(&dw[kRxPacketInfoDword])[k];
  }
  RxPacketInfo& rx_packet(unsigned k) {
    return reinterpret_cast<RxPacketInfo*>(&dw[kRxPacketInfoDword])[k];
  }
};
static_assert(sizeof(Cqe) == kCqeSize);

// NDIS hash-type bits of Cqe::RxHashType (doc/hardware.md §4.7).
enum HashType : uint32_t {
  kHashIpv4 = 1u << 0,
  kHashTcpIpv4 = 1u << 1,
  kHashUdpIpv4 = 1u << 2,
  kHashIpv6 = 1u << 3,
  kHashTcpIpv6 = 1u << 4,
  kHashUdpIpv6 = 1u << 5,
  kHashIpv6Ex = 1u << 6,
  kHashTcpIpv6Ex = 1u << 7,
  kHashUdpIpv6Ex = 1u << 8,
};
inline constexpr uint32_t kHashL3 = kHashIpv4 | kHashIpv6 | kHashIpv6Ex;
inline constexpr uint32_t kHashL4 =
    kHashTcpIpv4 | kHashUdpIpv4 | kHashTcpIpv6 | kHashUdpIpv6 | kHashTcpIpv6Ex | kHashUdpIpv6Ex;

// ---- CQ owner-bit protocol (doc/hardware.md §4.5)
// ----------------------------------------------------------- The consumer's free-running index
// starts at `count`; entry j of the CQ's life sits in slot j mod count with owner (1 + j / count)
// mod 8.
inline constexpr uint32_t kOwnerMask = 7;
constexpr uint32_t cq_initial_head(uint32_t count) { return count; }
constexpr uint32_t cq_producer_owner(uint64_t j, uint32_t count) {
  return static_cast<uint32_t>((1 + j / count) & kOwnerMask);
}
enum class CqeState { kEmpty, kValid, kOverflow };
// `log2_count`: the PMD uses power-of-two CQs so this needs no division.
constexpr CqeState cqe_state(uint32_t owner, uint32_t head, unsigned log2_count) {
  const uint32_t fresh = (head >> log2_count) & kOwnerMask;
  if (owner == fresh) return CqeState::kValid;
  if (owner == ((fresh - 1) & kOwnerMask)) return CqeState::kEmpty;
  return CqeState::kOverflow;
}

// ---- doorbells (doc/hardware.md §4.8)
// -----------------------------------------------------------------------
inline constexpr uint32_t kDoorbellPageSize = 4096;
inline constexpr uint32_t kSqDoorbellOffset = 0x000;
inline constexpr uint32_t kRqDoorbellOffset = 0x400;
inline constexpr uint32_t kCqDoorbellOffset = 0x800;
inline constexpr uint32_t kEqDoorbellOffset = 0xFF8;

constexpr uint64_t sq_doorbell(uint32_t sq_id, uint32_t tail_bytes) {
  return (uint64_t{tail_bytes} << 32) | (sq_id & kQueueIdMask);
}
constexpr uint64_t rq_doorbell(uint32_t rq_id, uint32_t tail_bytes, uint32_t wqe_cnt = 0) {
  return (uint64_t{tail_bytes} << 32) | (uint64_t{wqe_cnt & 0xFF} << 24) | (rq_id & kQueueIdMask);
}
constexpr uint64_t cq_doorbell(uint32_t cq_id, uint32_t tail, bool arm) {
  return (uint64_t{arm} << 63) | (uint64_t{tail & 0x7FFFFFFF} << 32) | (cq_id & kQueueIdMask);
}
constexpr uint32_t doorbell_queue_id(uint64_t v) { return static_cast<uint32_t>(v) & kQueueIdMask; }
constexpr uint32_t doorbell_wqe_cnt(uint64_t v) { return static_cast<uint32_t>(v >> 24) & 0xFF; }
constexpr uint32_t doorbell_wq_tail(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
constexpr uint32_t doorbell_cq_tail(uint64_t v) {
  return static_cast<uint32_t>(v >> 32) & 0x7FFFFFFF;
}
constexpr bool doorbell_cq_arm(uint64_t v) { return (v >> 63) != 0; }

}  // namespace mana::hw
