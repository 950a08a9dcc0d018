// SPDX-License-Identifier: BSD-3-Clause
// loop, pair and null wires, and the spec errors of make_wires().
#include <vector>

#include <gtest/gtest.h>

#include "wire/endpoints.h"
#include "wire/frame_ring.h"
#include "wire_test_util.h"

namespace {

using mana::emu::kLocalWireCapacity;
using mana::emu::kWireMaxFrameLen;
using mana::emu::WireEndpoint;
using wire_test::frame_seq;
using wire_test::make;
using wire_test::numbered_frame;

// Receives one frame and checks it is `seq` of `len` bytes.
void expect_frame(WireEndpoint* ep, uint32_t seq, uint32_t len) {
  std::vector<uint8_t> buf(kWireMaxFrameLen);
  EXPECT_EQ(ep->peek(), len);
  uint32_t full_len = 0;
  ASSERT_EQ(ep->receive(buf.data(), static_cast<uint32_t>(buf.size()), &full_len), len);
  EXPECT_EQ(full_len, len);
  buf.resize(len);
  EXPECT_EQ(buf, numbered_frame(seq, len)) << "seq " << seq;
}

TEST(LocalWire, LoopReturnsFramesInOrderWithTheirLengths) {
  std::string error;
  auto wires = make({"loop"}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* ep = wires->endpoint(0);
  ASSERT_NE(ep, nullptr);
  EXPECT_EQ(wires->endpoint(1), nullptr);
  EXPECT_EQ(ep->peek(), 0u);
  const uint32_t lens[] = {60, 64, 1514, 9216, 8, 123};
  for (uint32_t i = 0; i < 6; ++i)
    ASSERT_TRUE(ep->transmit(numbered_frame(i, lens[i]).data(), lens[i]));
  for (uint32_t i = 0; i < 6; ++i) expect_frame(ep, i, lens[i]);
  uint8_t buf[64];
  uint32_t full_len = 99;
  EXPECT_EQ(ep->receive(buf, sizeof buf, &full_len), 0u);
  EXPECT_EQ(full_len, 0u);
}

TEST(LocalWire, PairCrossesAndKeepsDirectionsApart) {
  std::string error;
  auto wires = make({"loop", "null", "pair", "pair"}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* a = wires->endpoint(2);
  WireEndpoint* b = wires->endpoint(3);
  for (uint32_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(a->transmit(numbered_frame(i, 60 + i).data(), 60 + i));
    ASSERT_TRUE(b->transmit(numbered_frame(1000 + i, 200 - i).data(), 200 - i));
  }
  // Nothing comes back to the sender, nor reaches the other ports.
  EXPECT_EQ(wires->endpoint(0)->peek(), 0u);
  for (uint32_t i = 0; i < 100; ++i) {
    expect_frame(b, i, 60 + i);
    expect_frame(a, 1000 + i, 200 - i);
  }
  EXPECT_EQ(a->peek(), 0u);
  EXPECT_EQ(b->peek(), 0u);
}

TEST(LocalWire, FullQueueDropsAndRecovers) {
  std::string error;
  auto wires = make({"pair", "pair"}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* a = wires->endpoint(0);
  WireEndpoint* b = wires->endpoint(1);
  // Several rounds so the indices wrap the ring more than once.
  uint32_t seq = 0, expected = 0;
  for (int round = 0; round < 3; ++round) {
    uint32_t accepted = 0;
    while (a->transmit(numbered_frame(seq, 64).data(), 64)) ++seq, ++accepted;
    EXPECT_EQ(accepted, round == 0 ? kLocalWireCapacity : kLocalWireCapacity - 1);
    EXPECT_FALSE(a->transmit(numbered_frame(seq, 64).data(), 64));  // still full
    // One taken makes room for exactly one.
    expect_frame(b, expected++, 64);
    ASSERT_TRUE(a->transmit(numbered_frame(seq, 64).data(), 64));
    ++seq;
    EXPECT_FALSE(a->transmit(numbered_frame(seq, 64).data(), 64));
    // Drain all but one; the dropped frames never appear.
    while (expected + 1 < seq) expect_frame(b, expected++, 64);
  }
}

TEST(LocalWire, TruncatesToTheBufferAndReportsTheFullLength) {
  std::string error;
  auto wires = make({"loop"}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* ep = wires->endpoint(0);
  const auto frame = numbered_frame(7, 1500);
  ASSERT_TRUE(ep->transmit(frame.data(), 1500));
  ASSERT_TRUE(ep->transmit(frame.data(), 1500));
  std::vector<uint8_t> buf(1500 + 16, 0xEE);
  uint32_t full_len = 0;
  ASSERT_EQ(ep->receive(buf.data(), 1000, &full_len), 1000u);
  EXPECT_EQ(full_len, 1500u);
  EXPECT_TRUE(std::equal(frame.begin(), frame.begin() + 1000, buf.begin()));
  EXPECT_EQ(buf[1000], 0xEE) << "wrote past the buffer capacity";
  // The truncated frame is gone; the next one is whole.
  ASSERT_EQ(ep->receive(buf.data(), static_cast<uint32_t>(buf.size()), &full_len), 1500u);
  EXPECT_EQ(full_len, 1500u);
}

TEST(LocalWire, RejectsEmptyAndOversizedFrames) {
  std::string error;
  auto wires = make({"loop"}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* ep = wires->endpoint(0);
  std::vector<uint8_t> big(kWireMaxFrameLen + 1, 1);
  EXPECT_FALSE(ep->transmit(big.data(), 0));
  EXPECT_FALSE(ep->transmit(big.data(), kWireMaxFrameLen + 1));
  EXPECT_TRUE(ep->transmit(big.data(), kWireMaxFrameLen));
  EXPECT_EQ(ep->peek(), kWireMaxFrameLen);
}

TEST(LocalWire, NullTakesEverythingAndDeliversNothing) {
  std::string error;
  auto wires = make({"null"}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* ep = wires->endpoint(0);
  const auto frame = numbered_frame(1, 64);
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(ep->transmit(frame.data(), 64));
  uint8_t buf[64];
  uint32_t full_len = 5;
  EXPECT_EQ(ep->peek(), 0u);
  EXPECT_EQ(ep->receive(buf, sizeof buf, &full_len), 0u);
  EXPECT_EQ(full_len, 0u);
}

TEST(WireSpecs, BadSpecsGiveAnError) {
  const std::vector<std::vector<std::string>> bad = {
      {"pair"},                  // alone
      {"loop", "pair"},          // port 1's partner is port 0
      {"pair", "loop"},          // port 0's partner is not a pair
      {"loop", "pair", "pair"},  // consecutive but not 2k/2k+1
      {"pair", "pair", "pair"},  // odd one out
      {"wormhole"},
      {""},
      {"tap:"},
      {"tap:an-interface-name-too-long"},
      {"shm:"},
      {"shm:a/b"},
  };
  for (const auto& specs : bad) {
    std::string error;
    EXPECT_EQ(make(specs, &error), nullptr) << specs.back();
    EXPECT_FALSE(error.empty()) << specs.back();
  }
  std::string error;
  make({"wormhole"}, &error);
  EXPECT_NE(error.find("unknown wire 'wormhole'"), std::string::npos) << error;
  make({"loop", "loop", "pair"}, &error);
  EXPECT_NE(error.find("port 2"), std::string::npos) << error;
}

TEST(WireSpecs, EmptySetIsValid) {
  std::string error;
  auto wires = mana::emu::make_wires(nullptr, 0, &error);
  ASSERT_TRUE(wires) << error;
  EXPECT_EQ(wires->endpoint(0), nullptr);
}

}  // namespace
