// SPDX-License-Identifier: BSD-3-Clause
// Subchannels and RSS (doc/hardware.md §11.8): SUBCH_REQ offers subchannels, the guest's RSS
// parameters spread received frames over them by Toeplitz, TX completes on the packet's channel.
#include <cstring>

#include "host_fixture.h"
#include "netvsc/ndis_format.h"
#include "netvsc/nvsp_format.h"

namespace mana::emu::netvsc::test {
namespace {

constexpr std::array<uint8_t, 40> kKey = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

// Toeplitz bit by bit: for every set input bit, XOR the 32 key bits starting at its position.
uint32_t toeplitz(const uint8_t* in, size_t len) {
  uint32_t h = 0;
  for (size_t i = 0; i < len * 8; ++i) {
    if (!(in[i / 8] & (0x80 >> (i % 8)))) continue;
    uint32_t window = 0;
    for (size_t b = 0; b < 32; ++b)
      window = (window << 1) | ((kKey[(i + b) / 8] >> (7 - (i + b) % 8)) & 1);
    h ^= window;
  }
  return h;
}

TEST_F(HostTest, SubchannelsAndRssSpreadFramesByToeplitz) {
  start_and_probe();
  ASSERT_TRUE(guest->configure_queues(4, kKey, ndis::kHashIpv4 | ndis::kHashTcpIpv4));
  EXPECT_EQ(hooks.offer_calls, std::vector<unsigned>{3});
  EXPECT_EQ(host->open_subchannels(), 3u);
  std::array<unsigned, 4> per_channel{};
  for (uint16_t port = 1; port <= 64; ++port) {
    const auto f = tcp_frame(kMac, 40000 + port, 443);
    ASSERT_TRUE(host->deliver_frame(f));
    guest->poll_all();
    ASSERT_EQ(guest->rx.size(), port);
    const RxFrame& got = guest->rx.back();
    uint8_t input[12];
    std::memcpy(input, f.data() + 26, 8);      // source and destination addresses
    std::memcpy(input + 8, f.data() + 34, 4);  // ports
    const uint32_t h = toeplitz(input, 12);
    EXPECT_EQ(got.channel, (h % 128) % 4) << "port " << port;
    ASSERT_TRUE(got.hash_value.has_value());
    EXPECT_EQ(*got.hash_value, h);
    EXPECT_EQ(got.hash_info, ndis::kHashTcpIpv4 | ndis::kHashFunctionToeplitz);
    ++per_channel[got.channel];
  }
  for (unsigned c = 0; c < 4; ++c) EXPECT_GT(per_channel[c], 4u) << "channel " << c;
  // Non-TCP IPv4 hashes the addresses only.
  auto udp = tcp_frame(kMac, 1, 2);
  udp[23] = 17;
  ASSERT_TRUE(host->deliver_frame(udp));
  guest->poll_all();
  EXPECT_EQ(*guest->rx.back().hash_value, toeplitz(udp.data() + 26, 8));
  EXPECT_EQ(guest->rx.back().hash_info, ndis::kHashIpv4 | ndis::kHashFunctionToeplitz);
}

TEST_F(HostTest, RssDisabledKeepsEverythingOnThePrimary) {
  start_and_probe();
  // Enabled with no hash type: nothing is hashed, everything stays on queue 0.
  ASSERT_TRUE(guest->configure_queues(4, kKey, 0));
  for (uint16_t port = 1; port <= 16; ++port)
    ASSERT_TRUE(host->deliver_frame(tcp_frame(kMac, port, 9)));
  guest->poll_all();
  ASSERT_EQ(guest->rx.size(), 16u);
  for (const auto& f : guest->rx) EXPECT_EQ(f.channel, 0u);
}

TEST_F(HostTest, SubchannelRequestBeyondMaxQueuesFails) {
  config.max_queues = 4;
  start_and_probe();
  const nvsp::SubchReq req{nvsp::kTypeSubchannel, nvsp::kSubchannelAllocate, 4, {}};
  auto r = guest->nvs_execute({reinterpret_cast<const uint8_t*>(&req), sizeof(req)},
                              nvsp::kTypeSubchannel, sizeof(nvsp::SubchResp));
  ASSERT_EQ(r.size(), 40u);
  uint32_t status;
  std::memcpy(&status, r.data() + 4, 4);
  EXPECT_EQ(status, nvsp::kStatusFailed);
  EXPECT_TRUE(hooks.offer_calls.empty());
}

TEST_F(HostTest, TxOnASubchannelCompletesOnIt) {
  start_and_probe();
  ASSERT_TRUE(guest->configure_queues(4, kKey, ndis::kHashTcpIpv4));
  guest->send_gpa(2, tcp_frame({0x02, 0, 0, 0, 0, 9}, 1, 2, 700), 0x99);
  guest->poll_all();
  ASSERT_EQ(guest->tx_done.size(), 1u);
  EXPECT_EQ(guest->tx_done[0].channel, 2u);
  EXPECT_EQ(guest->tx_done[0].xact_id, 0x99u);
  EXPECT_EQ(hooks.frames.size(), 1u);
}

}  // namespace
}  // namespace mana::emu::netvsc::test
