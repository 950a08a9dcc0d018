// SPDX-License-Identifier: BSD-3-Clause
// Byte checks of doc/hardware.md §4 against the format types.
#include "mana/gdma_format.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

using namespace mana::hw;

namespace {

template <typename T>
std::vector<uint8_t> bytes(const T& v) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

TEST(GdmaFormat, WqeSizes) {
  EXPECT_EQ(wqe_size(kShortOobSize, 1), 32u);
  EXPECT_EQ(wqe_size(kShortOobSize, 0), 32u);  // the dummy SGE still takes room
  EXPECT_EQ(wqe_size(kShortOobSize, 2), 64u);
  EXPECT_EQ(wqe_size(kShortOobSize, 3), 64u);
  EXPECT_EQ(wqe_size(kShortOobSize, 30), 512u);
  EXPECT_EQ(wqe_size(kLongOobSize, 1), 64u);
  EXPECT_EQ(wqe_size(kLongOobSize, 30), 512u);
  EXPECT_EQ(wqe_size(kShortOobSize, 15), 256u);  // libmana's RX/TX sizing for max_sge 15
  EXPECT_EQ(client_oob_size(0), 8u);
  EXPECT_EQ(client_oob_size(9), 24u);
}

TEST(GdmaFormat, TxShortOobByteChecks) {
  TxShortOob o{};
  o.dw0 = TxShortOob::Format::set(0, 1);
  EXPECT_EQ(bytes(o), (std::vector<uint8_t>{0x01, 0, 0, 0, 0, 0, 0, 0}));
  o = {};
  o.dw0 = TxShortOob::SuppressCqe::set(0, 1);
  EXPECT_EQ(bytes(o)[0], 0x80);
  o = {};
  o.dw0 = TxShortOob::VcqNumber::set(0, 0xABCDEF);
  EXPECT_EQ(bytes(o), (std::vector<uint8_t>{0x00, 0xef, 0xcd, 0xab, 0, 0, 0, 0}));
  o = {};
  o.dw1 = TxShortOob::TransportOffset::set(0, 0x3FF);
  EXPECT_EQ(bytes(o)[4], 0xff);
  EXPECT_EQ(bytes(o)[5], 0x03);
  o = {};
  o.dw1 = TxShortOob::VsqFrame::set(0, 0x3FFF);
  EXPECT_EQ(bytes(o)[5], 0xfc);
  EXPECT_EQ(bytes(o)[6], 0xff);
  o = {};
  o.dw1 = TxShortOob::VportOffset::set(0, 0xFF);
  EXPECT_EQ(bytes(o)[7], 0xff);
}

TEST(GdmaFormat, TxLongOobByteChecks) {
  TxOob o{};
  o.l.dw2 = TxLongOob::Pcp::set(TxLongOob::InjectVlan::set(0, 1), 7);
  auto b = bytes(o);
  EXPECT_EQ((std::vector<uint8_t>{b[8], b[9], b[10], b[11]}),
            (std::vector<uint8_t>{0x08, 0x00, 0x07, 0x00}));
  o = {};
  o.l.dw2 = TxLongOob::Dei::set(TxLongOob::Vid::set(0, 0xFFF), 1);
  b = bytes(o);
  EXPECT_EQ((std::vector<uint8_t>{b[8], b[9], b[10], b[11]}),
            (std::vector<uint8_t>{0x00, 0x00, 0xf8, 0xff}));
  o = {};
  o.l.dw3 = TxLongOob::LongVportOffset::set(0, 0xFFF);
  b = bytes(o);
  EXPECT_EQ(b[14], 0xff);
  EXPECT_EQ(b[15], 0x0f);
}

// The worked example of doc/hardware.md §4.3: IPv4/TCP with checksum offload, CQ 5, SQ 0x15, vPort
// offset 0.
TEST(GdmaFormat, TxWorkedExample) {
  struct {
    WqeHeader h;
    TxShortOob oob;
    Sge sge;
  } w{};
  static_assert(sizeof(w) == 32);
  w.h = WqeHeader::make(1, kShortOobSize);
  w.oob.dw0 = TxShortOob::IsIpv4::set(0, 1);
  w.oob.dw0 = TxShortOob::IpCsum::set(w.oob.dw0, 1);
  w.oob.dw0 = TxShortOob::TcpCsum::set(w.oob.dw0, 1);
  w.oob.dw0 = TxShortOob::VcqNumber::set(w.oob.dw0, 5);
  w.oob.dw1 = TxShortOob::TransportOffset::set(0, 34);
  w.oob.dw1 = TxShortOob::VsqFrame::set(w.oob.dw1, vsq_frame_of(0x15));
  auto b = bytes(w);
  EXPECT_EQ((std::vector<uint8_t>(b.begin(), b.begin() + 16)),
            (std::vector<uint8_t>{0, 0, 0, 0, 0x01, 0x02, 0, 0, 0x34, 0x05, 0, 0, 0x22, 0, 0, 0}));
  EXPECT_EQ(sq_doorbell(0x15, 7 * kBasicUnit), 0x000000E000000015ull);
}

TEST(GdmaFormat, CqeOwnerDword) {
  Cqe c{};
  c.dw[Cqe::kOwnerDword] = Cqe::Owner::set(Cqe::IsSq::set(Cqe::WqNum::set(0, 0x123456), 1), 7);
  EXPECT_EQ(c.dw[15], 0xE1123456u);
  EXPECT_EQ(c.owner(), 7u);
}

TEST(GdmaFormat, RxCompletionByteChecks) {
  Cqe c{};
  c.dw[1] = Cqe::RxHashType::set(0, 0x1FF);
  auto b = bytes(c);
  EXPECT_EQ(b[6], 0xff);
  EXPECT_EQ(b[7], 0x01);
  c = {};
  uint32_t w = Cqe::RxIpCsumOk::set(0, 1);
  w = Cqe::RxUdpCsumFail::set(w, 1);
  w = Cqe::RxVlanPresent::set(w, 1);
  w = Cqe::RxVlanId::set(w, 0xABC);
  c.dw[1] = w;
  b = bytes(c);
  EXPECT_EQ((std::vector<uint8_t>{b[4], b[5], b[6], b[7]}),
            (std::vector<uint8_t>{0xbc, 0x1a, 0x00, 0x42}));
  c = {};
  c.rx_packet(0).dw0 = 1514;
  c.rx_packet(3).packet_hash = 0xdeadbeef;
  b = bytes(c);
  EXPECT_EQ(b[8], 1514 & 0xff);
  EXPECT_EQ(b[9], 1514 >> 8);
  EXPECT_EQ(b[44 + 8], 0xef);
  EXPECT_EQ(b[44 + 11], 0xde);
  EXPECT_EQ(kHashL3, 0x049u);
  EXPECT_EQ(kHashL4, 0x1B6u);
}

TEST(GdmaFormat, DoorbellByteChecks) {
  EXPECT_EQ(cq_doorbell(0x123456, 0x7FFFFFFF, true), 0xFFFFFFFF00123456ull);
  EXPECT_EQ(rq_doorbell(1, 0x12345678, 0xFF), 0x12345678FF000001ull);
  const uint64_t v = rq_doorbell(0xABCDEF, 0xFFFFFFE0);
  EXPECT_EQ(doorbell_queue_id(v), 0xABCDEFu);
  EXPECT_EQ(doorbell_wq_tail(v), 0xFFFFFFE0u);
  EXPECT_EQ(doorbell_wqe_cnt(v), 0u);
  const uint64_t c = cq_doorbell(9, 1234, true);
  EXPECT_TRUE(doorbell_cq_arm(c));
  EXPECT_EQ(doorbell_cq_tail(c), 1234u);
}

// Producer and consumer agree over many wraps of the 3-bit owner counter.
TEST(GdmaFormat, OwnerProtocolAcrossWraps) {
  constexpr uint32_t kCount = 64;
  constexpr unsigned kLog2 = 6;
  uint32_t head = cq_initial_head(kCount);
  std::vector<uint32_t> ring(kCount, 0);
  // Nothing produced yet: every slot reads as empty.
  EXPECT_EQ(cqe_state(ring[head % kCount], head, kLog2), CqeState::kEmpty);
  for (uint64_t j = 0; j < kCount * 8 * 5; j++) {
    ring[j % kCount] = cq_producer_owner(j, kCount);
    ASSERT_EQ(cqe_state(ring[head % kCount], head, kLog2), CqeState::kValid) << j;
    head++;
    ASSERT_EQ(cqe_state(ring[head % kCount], head, kLog2), CqeState::kEmpty) << j;
  }
  // A producer two laps ahead is an overflow.
  ring[head % kCount] = (cq_producer_owner(head - kCount, kCount) + 1) & kOwnerMask;
  EXPECT_EQ(cqe_state(ring[head % kCount], head, kLog2), CqeState::kOverflow);
}

}  // namespace
