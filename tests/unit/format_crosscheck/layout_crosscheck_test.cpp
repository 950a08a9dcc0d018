// SPDX-License-Identifier: BSD-3-Clause
// Our hardware formats (common/include/mana/gdma_format.h) against DPDK's own net_mana definitions
// (drivers/net/mana/mana.h): every field both define, set through both, must give the same bytes.
// Fields only DPDK defines (we always write them as 0) are listed per structure; fields only we
// define are checked in kernel_table_test.cpp.
#include "dpdk_mana.h"

#include <cstddef>

#include "field_pairs.h"
#include "mana/gdma_format.h"

namespace {

using namespace mana::crosscheck;
namespace hw = mana::hw;
using hw::Cqe;
using hw::TxLongOob;
using hw::TxOob;
using hw::TxShortOob;
using hw::WqeHeader;
using Whole = hw::Field<0, 32>;  // a plain 32-bit member

// ---- GDMA WQE DMA OOB header (doc/hardware.md §4.2)
// Only DPDK: consume_credit, fence, check_sn, sgl_direct.
const FieldPair kWqeHeader[] = {
    {"last_v_bytes", MANA_OURS(WqeHeader, dw0, WqeHeader::LastVbytes),
     MANA_THEIRS(gdma_wqe_dma_oob, last_v_bytes)},
    {"num_sgl_entries", MANA_OURS(WqeHeader, dw1, WqeHeader::NumSge),
     MANA_THEIRS(gdma_wqe_dma_oob, num_sgl_entries)},
    {"inline_client_oob_size_in_dwords", MANA_OURS(WqeHeader, dw1, WqeHeader::OobDwords),
     MANA_THEIRS(gdma_wqe_dma_oob, inline_client_oob_size_in_dwords)},
    {"client_oob_in_sgl", MANA_OURS(WqeHeader, dw1, WqeHeader::ClientOobInSgl),
     MANA_THEIRS(gdma_wqe_dma_oob, client_oob_in_sgl)},
    {"client_data_unit", MANA_OURS(WqeHeader, dw1, WqeHeader::ClientDataUnit),
     MANA_THEIRS(gdma_wqe_dma_oob, client_data_unit)},
};

TEST(FormatCrosscheck, WqeHeader) {
  static_assert(sizeof(WqeHeader) == sizeof(gdma_wqe_dma_oob));
  expect_each_field_identical(kWqeHeader);
  expect_all_fields_identical(kWqeHeader);
}

// WqeHeader::make as DPDK's write_dma_client_oob fills the header (gdma.c).
TEST(FormatCrosscheck, WqeHeaderMake) {
  for (uint32_t oob : {hw::kShortOobSize, hw::kLongOobSize}) {
    for (uint32_t sges = 0; sges <= hw::kMaxTxSge; sges++) {
      gdma_wqe_dma_oob theirs;
      std::memset(&theirs, 0, sizeof theirs);
      theirs.num_sgl_entries = sges;
      theirs.inline_client_oob_size_in_dwords = oob / sizeof(uint32_t);
      const WqeHeader ours = WqeHeader::make(sges, oob);
      EXPECT_EQ(std::memcmp(&ours, &theirs, sizeof ours), 0) << sges << " SGEs, OOB " << oob;
    }
  }
}

// ---- SGE (doc/hardware.md §4.2)
TEST(FormatCrosscheck, Sge) {
  static_assert(sizeof(hw::Sge) == sizeof(gdma_sgl_element));
  static_assert(offsetof(hw::Sge, address) == offsetof(gdma_sgl_element, address));
  static_assert(offsetof(hw::Sge, mem_key) == offsetof(gdma_sgl_element, memory_key));
  static_assert(offsetof(hw::Sge, size) == offsetof(gdma_sgl_element, size));
  for (uint64_t a : {0x0123456789ABCDEFull, ~0ull, 1ull}) {
    const hw::Sge ours{a, static_cast<uint32_t>(a >> 7), static_cast<uint32_t>(~a)};
    gdma_sgl_element theirs;
    theirs.address = a;
    theirs.memory_key = static_cast<uint32_t>(a >> 7);
    theirs.size = static_cast<uint32_t>(~a);
    EXPECT_EQ(std::memcmp(&ours, &theirs, sizeof ours), 0) << std::hex << a;
  }
}

// ---- TX client OOB, short and long (doc/hardware.md §4.3)
void set_their_packet_format(Image& img, uint32_t v) {
  edit_as<transmit_short_oob_v2>(img, [v](transmit_short_oob_v2& t) {
    dpdk_set_packet_format(&t, v);  // an enum bit-field: set from C (see dpdk_gdma.h)
  });
}
void set_their_long_packet_format(Image& img, uint32_t v) {
  edit_as<transmit_oob_v2>(img,
                           [v](transmit_oob_v2& t) { dpdk_set_packet_format(&t.short_oob, v); });
}

const FieldPair kTxShortOob[] = {
    {"packet_format", MANA_OURS(TxShortOob, dw0, TxShortOob::Format), set_their_packet_format},
    {"tx_is_outer_ipv4", MANA_OURS(TxShortOob, dw0, TxShortOob::IsIpv4),
     MANA_THEIRS(transmit_short_oob_v2, tx_is_outer_ipv4)},
    {"tx_is_outer_ipv6", MANA_OURS(TxShortOob, dw0, TxShortOob::IsIpv6),
     MANA_THEIRS(transmit_short_oob_v2, tx_is_outer_ipv6)},
    {"tx_compute_IP_header_checksum", MANA_OURS(TxShortOob, dw0, TxShortOob::IpCsum),
     MANA_THEIRS(transmit_short_oob_v2, tx_compute_IP_header_checksum)},
    {"tx_compute_TCP_checksum", MANA_OURS(TxShortOob, dw0, TxShortOob::TcpCsum),
     MANA_THEIRS(transmit_short_oob_v2, tx_compute_TCP_checksum)},
    {"tx_compute_UDP_checksum", MANA_OURS(TxShortOob, dw0, TxShortOob::UdpCsum),
     MANA_THEIRS(transmit_short_oob_v2, tx_compute_UDP_checksum)},
    {"suppress_tx_CQE_generation", MANA_OURS(TxShortOob, dw0, TxShortOob::SuppressCqe),
     MANA_THEIRS(transmit_short_oob_v2, suppress_tx_CQE_generation)},
    {"VCQ_number", MANA_OURS(TxShortOob, dw0, TxShortOob::VcqNumber),
     MANA_THEIRS(transmit_short_oob_v2, VCQ_number)},
    {"tx_transport_header_offset", MANA_OURS(TxShortOob, dw1, TxShortOob::TransportOffset),
     MANA_THEIRS(transmit_short_oob_v2, tx_transport_header_offset)},
    {"VSQ_frame_num", MANA_OURS(TxShortOob, dw1, TxShortOob::VsqFrame),
     MANA_THEIRS(transmit_short_oob_v2, VSQ_frame_num)},
    {"short_vport_offset", MANA_OURS(TxShortOob, dw1, TxShortOob::VportOffset),
     MANA_THEIRS(transmit_short_oob_v2, short_vport_offset)},
};

TEST(FormatCrosscheck, TxShortOob) {
  static_assert(sizeof(TxShortOob) == sizeof(transmit_short_oob_v2));
  static_assert(hw::kShortOobSize == INLINE_OOB_SMALL_SIZE_IN_BYTES);
  static_assert(static_cast<uint32_t>(hw::PacketFormat::kShort) == SHORT_PACKET_FORMAT);
  static_assert(static_cast<uint32_t>(hw::PacketFormat::kLong) == LONG_PACKET_FORMAT);
  expect_each_field_identical(kTxShortOob);
  expect_all_fields_identical(kTxShortOob);
}

// The SQ id's frame number as DPDK's tx.c fills it: id >> WORK_QUEUE_NUMBER_BASE_BITS.
TEST(FormatCrosscheck, VsqFrameOfSqId) {
  for (unsigned bit = 0; bit < 24; bit++) {
    for (uint32_t id : {1u << bit, (2u << bit) - 1}) {
      transmit_short_oob_v2 theirs;
      std::memset(&theirs, 0, sizeof theirs);
      theirs.VSQ_frame_num = id >> WORK_QUEUE_NUMBER_BASE_BITS;
      const TxShortOob ours{0, TxShortOob::VsqFrame::set(0, hw::vsq_frame_of(id))};
      EXPECT_EQ(std::memcmp(&ours, &theirs, sizeof ours), 0) << "SQ id 0x" << std::hex << id;
    }
  }
}

// Only DPDK: tx_is_encapsulated_packet, tx_inner_is_ipv6, tx_inner_TCP_options_present,
// tx_inner_frame_offset, tx_inner_IP_header_relative_offset (never used by either driver).
const FieldPair kTxLongOob[] = {
    {"packet_format", MANA_OURS(TxOob, s.dw0, TxShortOob::Format), set_their_long_packet_format},
    {"VCQ_number", MANA_OURS(TxOob, s.dw0, TxShortOob::VcqNumber),
     MANA_THEIRS(transmit_oob_v2, short_oob.VCQ_number)},
    {"short_vport_offset", MANA_OURS(TxOob, s.dw1, TxShortOob::VportOffset),
     MANA_THEIRS(transmit_oob_v2, short_oob.short_vport_offset)},
    {"inject_vlan_prior_tag", MANA_OURS(TxOob, l.dw2, TxLongOob::InjectVlan),
     MANA_THEIRS(transmit_oob_v2, long_oob.inject_vlan_prior_tag)},
    {"priority_code_point", MANA_OURS(TxOob, l.dw2, TxLongOob::Pcp),
     MANA_THEIRS(transmit_oob_v2, long_oob.priority_code_point)},
    {"drop_eligible_indicator", MANA_OURS(TxOob, l.dw2, TxLongOob::Dei),
     MANA_THEIRS(transmit_oob_v2, long_oob.drop_eligible_indicator)},
    {"vlan_identifier", MANA_OURS(TxOob, l.dw2, TxLongOob::Vid),
     MANA_THEIRS(transmit_oob_v2, long_oob.vlan_identifier)},
    {"long_vport_offset", MANA_OURS(TxOob, l.dw3, TxLongOob::LongVportOffset),
     MANA_THEIRS(transmit_oob_v2, long_oob.long_vport_offset)},
};

TEST(FormatCrosscheck, TxLongOob) {
  static_assert(sizeof(TxOob) == sizeof(transmit_oob_v2));
  static_assert(sizeof(TxLongOob) == sizeof(transmit_long_oob_v2));
  static_assert(offsetof(TxOob, l) == offsetof(transmit_oob_v2, long_oob));
  static_assert(hw::kLongOobSize == INLINE_OOB_LARGE_SIZE_IN_BYTES);
  expect_each_field_identical(kTxLongOob);
  expect_all_fields_identical(kTxLongOob);
}

// ---- completion queue entries (doc/hardware.md §4.5, §4.7)
// dw15 of every CQE, DPDK's gdma_hardware_completion_entry. Only DPDK: the reserved bits [28:25].
// One field per line in these lists:
// clang-format off
#define MANA_CQE_TAIL_FIELDS                                                                     \
  {"wq_num", MANA_OURS(Cqe, dw[Cqe::kOwnerDword], Cqe::WqNum),                                  \
   MANA_THEIRS(gdma_hardware_completion_entry, wq_num)},                                        \
  {"is_sq", MANA_OURS(Cqe, dw[Cqe::kOwnerDword], Cqe::IsSq),                                    \
   MANA_THEIRS(gdma_hardware_completion_entry, is_sq)},                                         \
  {"owner_bits", MANA_OURS(Cqe, dw[Cqe::kOwnerDword], Cqe::Owner),                              \
   MANA_THEIRS(gdma_hardware_completion_entry, owner_bits)}
// dw0: mana_cqe_header, as the first member of DPDK's completion OOB type T.
#define MANA_CQE_HEADER_FIELDS(T)                                                                \
  {"cqe_type", MANA_OURS(Cqe, dw[0], Cqe::Type), MANA_THEIRS(T, cqe_hdr.cqe_type)},             \
  {"client_type", MANA_OURS(Cqe, dw[0], Cqe::ClientType), MANA_THEIRS(T, cqe_hdr.client_type)}, \
  {"vendor_err", MANA_OURS(Cqe, dw[0], Cqe::VendorErr), MANA_THEIRS(T, cqe_hdr.vendor_err)}
#define MANA_RX_PACKET_INFO_FIELDS(k)                                                            \
  {"packet_info[" #k "].packet_length",                                                         \
   MANA_OURS(Cqe, rx_packet(k).dw0, hw::RxPacketInfo::Length),                                  \
   MANA_THEIRS(mana_rx_comp_oob, packet_info[k].packet_length)},                                \
  {"packet_info[" #k "].packet_hash", MANA_OURS(Cqe, rx_packet(k).packet_hash, Whole),          \
   MANA_THEIRS(mana_rx_comp_oob, packet_info[k].packet_hash)}
#define MANA_RX_FLAG(name, F) \
  {#name, MANA_OURS(Cqe, dw[Cqe::kRxFlagsDword], Cqe::F), MANA_THEIRS(mana_rx_comp_oob, name)}
// clang-format on

// Only DPDK: the reserved bits dw1 [15] and [31], and packet_info[k] reserved0/reserved1.
const FieldPair kRxCqe[] = {
    MANA_CQE_HEADER_FIELDS(mana_rx_comp_oob),
    MANA_RX_FLAG(rx_vlan_id, RxVlanId),
    MANA_RX_FLAG(rx_vlan_tag_present, RxVlanPresent),
    MANA_RX_FLAG(rx_outer_ip_header_checksum_succeeded, RxOuterIpCsumOk),
    MANA_RX_FLAG(rx_outer_ip_header_checksum_failed, RxOuterIpCsumFail),
    MANA_RX_FLAG(rx_hash_type, RxHashType),
    MANA_RX_FLAG(rx_ip_header_checksum_succeeded, RxIpCsumOk),
    MANA_RX_FLAG(rx_ip_header_checksum_failed, RxIpCsumFail),
    MANA_RX_FLAG(rx_tcp_checksum_succeeded, RxTcpCsumOk),
    MANA_RX_FLAG(rx_tcp_checksum_failed, RxTcpCsumFail),
    MANA_RX_FLAG(rx_udp_checksum_succeeded, RxUdpCsumOk),
    MANA_RX_FLAG(rx_udp_checksum_failed, RxUdpCsumFail),
    MANA_RX_PACKET_INFO_FIELDS(0),
    MANA_RX_PACKET_INFO_FIELDS(1),
    MANA_RX_PACKET_INFO_FIELDS(2),
    MANA_RX_PACKET_INFO_FIELDS(3),
    {"received_wqe_offset", MANA_OURS(Cqe, dw[Cqe::kRxWqeOffsetDword], Whole),
     MANA_THEIRS(mana_rx_comp_oob, received_wqe_offset)},
    MANA_CQE_TAIL_FIELDS,
};

TEST(FormatCrosscheck, RxCqe) {
  static_assert(sizeof(Cqe) == sizeof(gdma_hardware_completion_entry));
  static_assert(sizeof(mana_rx_comp_oob) == GDMA_COMP_DATA_SIZE);
  static_assert(Cqe::kOwnerDword * 4 == GDMA_COMP_DATA_SIZE);
  static_assert(sizeof(hw::RxPacketInfo) == sizeof(mana_rx_comp_per_packet_info));
  static_assert(Cqe::kRxPacketInfoDword * 4 == offsetof(mana_rx_comp_oob, packet_info));
  static_assert(Cqe::kRxMaxPackets == RX_COM_OOB_NUM_PACKETINFO_SEGMENTS);
  static_assert(Cqe::kRxWqeOffsetDword * 4 == offsetof(mana_rx_comp_oob, received_wqe_offset));
  expect_each_field_identical(kRxCqe);
  expect_all_fields_identical(kRxCqe);
}

// Only DPDK: reserved[12] (dw3-dw14).
const FieldPair kTxCqe[] = {
    MANA_CQE_HEADER_FIELDS(mana_tx_comp_oob),
    {"tx_data_offset", MANA_OURS(Cqe, dw[Cqe::kTxDataOffsetDword], Whole),
     MANA_THEIRS(mana_tx_comp_oob, tx_data_offset)},
    {"tx_sgl_offset", MANA_OURS(Cqe, dw[Cqe::kTxWqeOffsetDword], Cqe::TxSglOffset),
     MANA_THEIRS(mana_tx_comp_oob, tx_sgl_offset)},
    {"tx_wqe_offset", MANA_OURS(Cqe, dw[Cqe::kTxWqeOffsetDword], Cqe::TxWqeOffset),
     MANA_THEIRS(mana_tx_comp_oob, tx_wqe_offset)},
    MANA_CQE_TAIL_FIELDS,
};

TEST(FormatCrosscheck, TxCqe) {
  static_assert(sizeof(mana_tx_comp_oob) == GDMA_COMP_DATA_SIZE);
  expect_each_field_identical(kTxCqe);
  expect_all_fields_identical(kTxCqe);
}

// Our convenience getters read what DPDK's definition wrote.
TEST(FormatCrosscheck, CqeGetters) {
  Image img{};
  edit_as<gdma_hardware_completion_entry>(
      img, [](gdma_hardware_completion_entry& e) { e.owner_bits = 5; });
  edit_as<mana_rx_comp_oob>(img, [](mana_rx_comp_oob& o) {
    o.cqe_hdr.cqe_type = CQE_RX_COALESCED_4;
    for (unsigned k = 0; k < RX_COM_OOB_NUM_PACKETINFO_SEGMENTS; k++) {
      o.packet_info[k].packet_length = 1000 + k;
      o.packet_info[k].packet_hash = 0xC0DE0000 + k;
    }
  });
  const Cqe c = read_as<Cqe>(img);
  EXPECT_EQ(c.owner(), 5u);
  EXPECT_EQ(c.type(), hw::kCqeRxCoalesced4);
  for (unsigned k = 0; k < Cqe::kRxMaxPackets; k++) {
    EXPECT_EQ(hw::RxPacketInfo::Length::get(c.rx_packet(k).dw0), 1000 + k);
    EXPECT_EQ(c.rx_packet(k).packet_hash, 0xC0DE0000 + k);
  }
}

// ---- constants
struct Constant {
  const char* name;
  uint32_t theirs;
  uint32_t ours;
};
#define MANA_CONSTANT(theirs, ours) \
  { #theirs, static_cast < uint32_t>(theirs), ours }

TEST(FormatCrosscheck, CqeTypes) {
  const Constant types[] = {
      MANA_CONSTANT(CQE_INVALID, hw::kCqeInvalid),
      MANA_CONSTANT(CQE_RX_OKAY, hw::kCqeRxOkay),
      MANA_CONSTANT(CQE_RX_COALESCED_4, hw::kCqeRxCoalesced4),
      MANA_CONSTANT(CQE_RX_OBJECT_FENCE, hw::kCqeRxObjectFence),
      MANA_CONSTANT(CQE_RX_TRUNCATED, hw::kCqeRxTruncated),
      MANA_CONSTANT(CQE_TX_OKAY, hw::kCqeTxOkay),
      MANA_CONSTANT(CQE_TX_SA_DROP, hw::kCqeTxSaDrop),
      MANA_CONSTANT(CQE_TX_MTU_DROP, hw::kCqeTxMtuDrop),
      MANA_CONSTANT(CQE_TX_INVALID_OOB, hw::kCqeTxInvalidOob),
      MANA_CONSTANT(CQE_TX_INVALID_ETH_TYPE, hw::kCqeTxInvalidEthType),
      MANA_CONSTANT(CQE_TX_HDR_PROCESSING_ERROR, hw::kCqeTxHdrProcessingError),
      MANA_CONSTANT(CQE_TX_VF_DISABLED, hw::kCqeTxVfDisabled),
      MANA_CONSTANT(CQE_TX_VPORT_IDX_OUT_OF_RANGE, hw::kCqeTxVportIdxOutOfRange),
      MANA_CONSTANT(CQE_TX_VPORT_DISABLED, hw::kCqeTxVportDisabled),
      MANA_CONSTANT(CQE_TX_VLAN_TAGGING_VIOLATION, hw::kCqeTxVlanTaggingViolation),
  };
  for (const Constant& c : types) EXPECT_EQ(c.ours, c.theirs) << c.name;
  EXPECT_EQ(hw::kCqeTypeCount, CQE_TX_VLAN_TAGGING_VIOLATION + 1u);
}

TEST(FormatCrosscheck, HashTypes) {
  const Constant hashes[] = {
      MANA_CONSTANT(NDIS_HASH_IPV4, hw::kHashIpv4),
      MANA_CONSTANT(NDIS_HASH_TCP_IPV4, hw::kHashTcpIpv4),
      MANA_CONSTANT(NDIS_HASH_UDP_IPV4, hw::kHashUdpIpv4),
      MANA_CONSTANT(NDIS_HASH_IPV6, hw::kHashIpv6),
      MANA_CONSTANT(NDIS_HASH_TCP_IPV6, hw::kHashTcpIpv6),
      MANA_CONSTANT(NDIS_HASH_UDP_IPV6, hw::kHashUdpIpv6),
      MANA_CONSTANT(NDIS_HASH_IPV6_EX, hw::kHashIpv6Ex),
      MANA_CONSTANT(NDIS_HASH_TCP_IPV6_EX, hw::kHashTcpIpv6Ex),
      MANA_CONSTANT(NDIS_HASH_UDP_IPV6_EX, hw::kHashUdpIpv6Ex),
      MANA_CONSTANT(MANA_HASH_L3, hw::kHashL3),
      MANA_CONSTANT(MANA_HASH_L4, hw::kHashL4),
  };
  for (const Constant& c : hashes) EXPECT_EQ(c.ours, c.theirs) << c.name;
}

TEST(FormatCrosscheck, Geometry) {
  const Constant sizes[] = {
      MANA_CONSTANT(GDMA_WQE_ALIGNMENT_UNIT_SIZE, hw::kBasicUnit),
      MANA_CONSTANT(COMP_ENTRY_SIZE, hw::kCqeSize),
      MANA_CONSTANT(MAX_TX_WQE_SIZE, hw::kMaxSqeSize),
      MANA_CONSTANT(MAX_RX_WQE_SIZE, hw::kMaxRqeSize),
      MANA_CONSTANT(INLINE_OOB_SMALL_SIZE_IN_BYTES, hw::kShortOobSize),
      MANA_CONSTANT(INLINE_OOB_LARGE_SIZE_IN_BYTES, hw::kLongOobSize),
      MANA_CONSTANT(sizeof(gdma_wqe_dma_oob), hw::kDmaOobSize),
      MANA_CONSTANT(sizeof(gdma_sgl_element), hw::kSgeSize),
      MANA_CONSTANT(MAX_SGL_ENTRIES_FOR_TRANSMIT, hw::kMaxTxSge),
      MANA_CONSTANT(TOEPLITZ_HASH_KEY_SIZE_IN_BYTES, hw::kRssKeySize),
      MANA_CONSTANT(INDIRECTION_TABLE_NUM_ELEMENTS, hw::kRssTableSize),
      MANA_CONSTANT(COMPLETION_QUEUE_OWNER_MASK, hw::kOwnerMask),
  };
  for (const Constant& c : sizes) EXPECT_EQ(c.ours, c.theirs) << c.name;
}

}  // namespace
