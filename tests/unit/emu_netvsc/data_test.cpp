// SPDX-License-Identifier: BSD-3-Clause
// The synthetic data path (doc/hardware.md §11.7, §11.8): TX from chimney sections and GPA ranges
// with completions, RX into receive sections, the packet filter, full rings.
#include <cstring>

#include "host_fixture.h"
#include "netvsc/ndis_format.h"
#include "netvsc/nvsp_format.h"

namespace mana::emu::netvsc::test {
namespace {

std::vector<uint8_t> frame_of(uint32_t len, uint8_t seed) {
  auto f = tcp_frame({0x02, 0, 0, 0, 0, 0x22}, 1000 + seed, 80, len);
  return f;
}

uint16_t ipv4_header_checksum(const uint8_t* ip) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2)
    if (i != 10) sum += (ip[i] << 8) | ip[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

TEST_F(HostTest, ChimneyTxAggregatedFramesGoOutAndComplete) {
  start_and_probe();
  const std::vector<std::vector<uint8_t>> frames = {frame_of(60, 1), frame_of(101, 2),
                                                    frame_of(200, 3)};
  guest->send_chimney(0, 3, frames, 0x1234);
  EXPECT_EQ(hooks.frames, frames);
  guest->process_events(0);
  ASSERT_EQ(guest->tx_done.size(), 1u);
  EXPECT_EQ(guest->tx_done[0].channel, 0u);
  EXPECT_EQ(guest->tx_done[0].xact_id, 0x1234u);
  EXPECT_EQ(guest->tx_done[0].status, nvsp::kStatusOk);
  EXPECT_EQ(host->counters().tx_packets, 3u);
  EXPECT_EQ(host->counters().tx_bytes, 361u);
  EXPECT_EQ(host->counters().tx_completions, 1u);
}

TEST_F(HostTest, GpaTxAcrossPagesWithChecksumAndVlan) {
  start_and_probe();
  auto f = frame_of(300, 4);
  f[14 + 10] = f[14 + 11] = 0;  // the IPv4 header checksum is the host's to fill
  const uint32_t csum = ndis::kTxCsumIpv4 | ndis::kTxCsumIp;
  const uint32_t vlan = (5u << 4) | 3u;           // VLAN 5, priority 3
  guest->send_gpa(0, f, 0x77, csum, vlan, 4000);  // data in two pages
  ASSERT_EQ(hooks.frames.size(), 1u);
  const auto& out = hooks.frames[0];
  ASSERT_EQ(out.size(), f.size() + 4);
  EXPECT_EQ(out[12], 0x81);
  EXPECT_EQ(out[13], 0x00);
  EXPECT_EQ((out[14] << 8) | out[15], (3 << 13) | 5);
  const uint8_t* ip = out.data() + 18;
  EXPECT_EQ((ip[10] << 8) | ip[11], ipv4_header_checksum(ip));
  EXPECT_TRUE(std::equal(out.begin() + 38, out.end(), f.begin() + 34)) << "payload";
  guest->process_events(0);
  ASSERT_EQ(guest->tx_done.size(), 1u);
  EXPECT_EQ(guest->tx_done[0].xact_id, 0x77u);
}

TEST_F(HostTest, LsoPacketIsSegmentedAtTheMss) {
  start_and_probe();
  auto f = frame_of(14 + 20 + 20 + 2500, 5);
  const uint32_t lso = 1000u | (34u << 20) | 0x40000000u;  // MSS 1000, TCP at 34, LSOv2 (IPv4)
  guest->send_gpa(0, f, 0x55, std::nullopt, std::nullopt, 100, lso);
  ASSERT_EQ(hooks.frames.size(), 3u);
  EXPECT_EQ(hooks.frames[0].size(), 54u + 1000);
  EXPECT_EQ(hooks.frames[1].size(), 54u + 1000);
  EXPECT_EQ(hooks.frames[2].size(), 54u + 500);
  for (size_t i = 0; i < 3; ++i) {
    const uint8_t* tcp = hooks.frames[i].data() + 34;
    const uint32_t seq = (tcp[4] << 24) | (tcp[5] << 16) | (tcp[6] << 8) | tcp[7];
    EXPECT_EQ(seq, i * 1000) << "segment " << i;
    EXPECT_TRUE(
        std::equal(hooks.frames[i].begin() + 54, hooks.frames[i].end(), f.begin() + 54 + i * 1000));
  }
  guest->process_events(0);
  ASSERT_EQ(guest->tx_done.size(), 1u);
  EXPECT_EQ(guest->tx_done[0].status, nvsp::kStatusOk);
  EXPECT_EQ(host->counters().tx_packets, 1u);  // one RNDIS packet from the guest
}

TEST_F(HostTest, RxFrameLandsInASectionWithChecksumInfo) {
  start_and_probe();
  const auto f = tcp_frame(kMac, 1234, 80);  // TCP checksum left 0: wrong
  EXPECT_TRUE(host->deliver_frame(f));
  guest->process_events(0);
  ASSERT_EQ(guest->rx.size(), 1u);
  EXPECT_EQ(guest->rx[0].data, f);
  EXPECT_EQ(guest->rx[0].channel, 0u);
  ASSERT_TRUE(guest->rx[0].csum_info.has_value());
  EXPECT_EQ(*guest->rx[0].csum_info, ndis::kRxCsumIpOk | ndis::kRxCsumTcpFailed);
  EXPECT_FALSE(guest->rx[0].hash_info.has_value()) << "no RSS configured";
  EXPECT_EQ(host->counters().rx_packets, 1u);
  EXPECT_EQ(host->counters().rx_bytes, f.size());
}

TEST_F(HostTest, PacketFilterDecidesWhatIsDelivered) {
  start();
  ASSERT_EQ(guest->probe(), nvsp::kVersion61);  // filter 0 until the port starts
  EXPECT_FALSE(host->deliver_frame(tcp_frame(kMac, 1, 2)));
  EXPECT_EQ(host->counters().rx_filtered, 1u);
  const uint32_t filter = 0x0D;
  ASSERT_TRUE(guest->rndis_set(0x0001010E, {reinterpret_cast<const uint8_t*>(&filter), 4}));
  EXPECT_EQ(host->packet_filter(), 0x0Du);
  EXPECT_FALSE(host->deliver_frame(tcp_frame({0x02, 0, 0, 0, 0, 0x55}, 1, 2)));  // not ours
  EXPECT_TRUE(host->deliver_frame(tcp_frame({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1, 2)));
  EXPECT_TRUE(host->deliver_frame(tcp_frame({0x01, 0, 0x5e, 0, 0, 1}, 1, 2)));  // all-multicast
  EXPECT_TRUE(host->deliver_frame(tcp_frame(kMac, 1, 2)));
  EXPECT_EQ(host->counters().rx_filtered, 2u);
  EXPECT_EQ(host->counters().rx_packets, 3u);
}

TEST_F(HostTest, SectionsAreReusedOnlyAfterTheGuestCompletes) {
  start_and_probe();
  guest->hold_sections = true;
  const uint32_t n = guest->rxbuf_section_count;
  std::vector<bool> seen(n, false);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_TRUE(host->deliver_frame(tcp_frame(kMac, 1, 2, 64))) << i;
    guest->process_events(0);
    ASSERT_EQ(guest->held.size(), i + 1);
    const uint64_t id = guest->held.back().second;
    ASSERT_LT(id, n);
    EXPECT_FALSE(seen[id]) << "section " << id << " handed out twice";
    seen[id] = true;
  }
  EXPECT_FALSE(host->deliver_frame(tcp_frame(kMac, 1, 2, 64)));
  EXPECT_EQ(host->counters().rx_dropped_no_section, 1u);
  const uint64_t back = guest->held[17].second;
  guest->ack(0, back);
  EXPECT_TRUE(host->deliver_frame(tcp_frame(kMac, 1, 2, 64)));
  guest->process_events(0);
  EXPECT_EQ(guest->held.back().second, back);
  EXPECT_EQ(host->counters().malformed, 0u);
}

TEST_F(HostTest, FramesLongerThanASectionAreDropped) {
  config.mtu = 1500;
  start_and_probe();
  // 1808-byte sections hold 44 + 16 + 1748 bytes of frame at most.
  EXPECT_TRUE(host->deliver_frame(tcp_frame(kMac, 1, 2, 1748)));
  EXPECT_FALSE(host->deliver_frame(tcp_frame(kMac, 1, 2, 1749)));
  EXPECT_EQ(host->counters().rx_dropped_too_long, 1u);
}

TEST_F(HostTest, FullRingKeepsCompletionsInOrderAndDropsFrames) {
  start_and_probe();
  hooks.ch(0).room = 0;
  guest->send_gpa(0, frame_of(100, 1), 0x10);
  guest->send_gpa(0, frame_of(100, 2), 0x11);
  EXPECT_EQ(host->counters().pending_sends, 2u);
  EXPECT_FALSE(host->deliver_frame(tcp_frame(kMac, 1, 2)));
  EXPECT_EQ(host->counters().rx_dropped_ring_full, 1u);
  hooks.ch(0).room = 100;
  host->poll();
  EXPECT_EQ(host->counters().pending_sends, 0u);
  guest->process_events(0);
  ASSERT_EQ(guest->tx_done.size(), 2u);
  EXPECT_EQ(guest->tx_done[0].xact_id, 0x10u);
  EXPECT_EQ(guest->tx_done[1].xact_id, 0x11u);
}

TEST_F(HostTest, RndisAnswerWaitsForARingWithRoom) {
  start_and_probe();
  hooks.ch(0).room = 0;
  const uint8_t query[28] = {4, 0, 0, 0, 28, 0, 0, 0, 99, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 20};
  const uint64_t addr = mem.alloc(4096);
  std::memcpy(mem.at(addr), query, sizeof(query));
  const GpaRange range{28, 0, addr / 4096};
  const nvsp::Rndis ctl{nvsp::kTypeRndis, nvsp::kRndisControl, nvsp::kNoChimneySection, 0, {}};
  host->on_guest_packet(0, {kPacketGpa,
                            kFlagCompletionRequested,
                            0,
                            {reinterpret_cast<const uint8_t*>(&ctl), sizeof(ctl)},
                            {&range, 1}});
  EXPECT_EQ(host->counters().pending_sends, 2u);  // the answer and the GPA packet's completion
  hooks.ch(0).room = 100;
  host->poll();
  ASSERT_EQ(hooks.ch(0).packets.size(), 2u);
  EXPECT_EQ(hooks.ch(0).packets[0].type, kPacketRxbuf);
  EXPECT_EQ(hooks.ch(0).packets[1].type, kPacketCompletion);
  uint32_t rid;
  std::memcpy(&rid, mem.rxbuf.data() + hooks.ch(0).packets[0].ranges[0].offset + 8, 4);
  EXPECT_EQ(rid, 99u);
}

}  // namespace
}  // namespace mana::emu::netvsc::test
