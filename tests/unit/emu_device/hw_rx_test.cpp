// SPDX-License-Identifier: BSD-3-Clause
// Open hardware behaviours of the RX path (emu/device/hw_behaviour.h, doc/emulator.md "Open
// behaviours: data path"): ipv6-ip-csum, hash-type, single-queue-hash, zero-length-cqe and
// rx-oversize, each in every setting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "driver.h"
#include "frames.h"
#include "rx_common.h"

namespace mana::emu::test {
namespace {

using C = hw::Cqe;
using Frames = std::vector<std::vector<uint8_t>>;

FlowSpec flow(uint8_t proto = 17, bool ipv6 = false, uint32_t payload = 18) {
  FlowSpec f = ip_flow(proto, ipv6, {0x02, 0, 0, 0, 0, 0x99}, port_mac(0));
  if (!ipv6) f.dst = {198, 19, 0, 2};
  f.sport = 4321;
  f.dport = 80;
  f.payload = payload;
  return f;
}

template <typename SetHw>
VfConfig config_with(SetHw set, bool coalescing = false) {
  VfConfig c = test_config(1, coalescing);
  set(c.hw);
  return c;
}

// One port with `queues` RX queues, 32 WQEs of `buf_bytes` posted on each.
struct RxBench {
  explicit RxBench(const VfConfig& config, unsigned queues = 1, uint32_t buf_bytes = 2048)
      : d(config), rx(d, 1, queues) {
    EXPECT_EQ(rx.status, 0);
    for (unsigned q = 0; q < queues; ++q) {
      rx.post(q, 32, buf_bytes);
      rx.doorbell(q);
    }
  }
  // Sends `frames` in one poll and returns the completions of every queue.
  std::vector<RxCompletion> receive(const Frames& frames) {
    for (const auto& f : frames) d.wire(0).incoming.push_back(f);
    d.dev().poll();
    std::vector<RxCompletion> all;
    for (auto& q : rx.queues)
      for (const RxCompletion& c : drain_rx(q->cq)) all.push_back(c);
    return all;
  }
  QueueCounters counters(unsigned q = 0) { return d.dev().rq_counters(rx.queues[q]->id); }
  Driver d;
  RxSet rx;
};

TEST(HwIpv6IpCsum, OnSetsTheIpChecksumOkBitForValidIpv6HeadersOnly) {
  std::vector<uint8_t> bad_v6 = build_frame(flow(17, true));
  store_be16(&bad_v6[kL3 + 4], 0xFFFF);  // payload length beyond the frame: not a valid header
  const Frames frames = {build_frame(flow(17, true)), build_frame(flow(6, true)), bad_v6,
                         build_frame(flow(17, false))};
  for (bool on : {false, true}) {
    RxBench b(config_with([&](HwBehaviour& hw) { hw.ipv6_ip_csum = on; }));
    auto c = b.receive(frames);
    ASSERT_EQ(c.size(), 4u);
    EXPECT_EQ(C::RxIpCsumOk::get(c[0].dw1), on ? 1u : 0u) << "UDP/IPv6, on=" << on;
    EXPECT_EQ(C::RxIpCsumOk::get(c[1].dw1), on ? 1u : 0u) << "TCP/IPv6, on=" << on;
    EXPECT_EQ(C::RxUdpCsumOk::get(c[0].dw1), 1u);
    EXPECT_EQ(C::RxTcpCsumOk::get(c[1].dw1), 1u);
    EXPECT_EQ(C::RxIpCsumOk::get(c[2].dw1), 0u) << "invalid IPv6 header, on=" << on;
    EXPECT_EQ(C::RxIpCsumFail::get(c[0].dw1) | C::RxIpCsumFail::get(c[2].dw1), 0u);
    EXPECT_EQ(C::RxIpCsumOk::get(c[3].dw1), 1u) << "IPv4 is unaffected";
  }
}

TEST(HwHashType, OneNdisBitOrTheCompositeMasksDpdkCompares) {
  std::vector<uint8_t> gre = build_frame(flow(47, false));  // not TCP/UDP: an L3 hash
  const Frames frames = {build_frame(flow(17, false)), build_frame(flow(6, true)), gre,
                         build_frame(flow(47, true))};
  std::vector<RxCompletion> bit, mask;
  for (auto mode : {HwBehaviour::HashType::kOneBit, HwBehaviour::HashType::kMask}) {
    RxBench b(config_with([&](HwBehaviour& hw) { hw.hash_type = mode; }), 2);
    auto c = b.receive(frames);
    ASSERT_EQ(c.size(), 4u);
    // Completions come per queue: order them by the frame length, which differs per frame.
    std::sort(c.begin(), c.end(), [](const auto& x, const auto& y) { return x.len[0] < y.len[0]; });
    (mode == HwBehaviour::HashType::kMask ? mask : bit) = c;
  }
  auto type_of = [](const std::vector<RxCompletion>& c, size_t len) {
    for (const auto& x : c)
      if (x.len[0] == len) return C::RxHashType::get(x.dw1);
    return ~0u;
  };
  EXPECT_EQ(type_of(bit, frames[0].size()), hw::kHashUdpIpv4);
  EXPECT_EQ(type_of(bit, frames[1].size()), hw::kHashTcpIpv6);
  EXPECT_EQ(type_of(bit, frames[2].size()), hw::kHashIpv4);
  EXPECT_EQ(type_of(bit, frames[3].size()), hw::kHashIpv6);
  EXPECT_EQ(type_of(mask, frames[0].size()), 0x1B6u);
  EXPECT_EQ(type_of(mask, frames[1].size()), 0x1B6u);
  EXPECT_EQ(type_of(mask, frames[2].size()), 0x049u);
  EXPECT_EQ(type_of(mask, frames[3].size()), 0x049u);
  for (size_t i = 0; i < bit.size(); ++i) {
    EXPECT_EQ(bit[i].hash[0], mask[i].hash[0]) << "the hash itself does not change";
    EXPECT_NE(bit[i].hash[0], 0u);
  }
}

TEST(HwSingleQueueHash, AOneEntryTableReportsNoHashUnlessOn) {
  const Frames frames = {build_frame(flow(6, false)), build_frame(flow(17, true))};
  for (bool on : {false, true}) {
    RxBench b(config_with([&](HwBehaviour& hw) { hw.single_queue_hash = on; }));
    auto c = b.receive(frames);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(C::RxHashType::get(c[0].dw1), on ? hw::kHashTcpIpv4 : 0u);
    EXPECT_EQ(C::RxHashType::get(c[1].dw1), on ? hw::kHashUdpIpv6 : 0u);
    EXPECT_EQ(c[0].hash[0] != 0, on);
    EXPECT_EQ(c[1].hash[0] != 0, on);
  }
  // Two entries that name the same WQ still hash: the table has more than one entry.
  RxBench two(test_config(1), 2);
  auto c = two.receive({build_frame(flow(6, false))});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(C::RxHashType::get(c[0].dw1), hw::kHashTcpIpv4);
}

TEST(HwZeroLengthCqe, EveryNthCompletionIsPrecededByAnEmptyOneThatConsumedNoWqe) {
  RxBench b(config_with([](HwBehaviour& hw) { hw.zero_length_cqe_every = 3; }));
  std::vector<RxCompletion> all;
  for (unsigned i = 0; i < 7; ++i) {
    auto c = b.receive({build_frame(flow(17, false, 20 + i))});
    all.insert(all.end(), c.begin(), c.end());
  }
  ASSERT_EQ(all.size(), 9u);  // 7 frames, an empty CQE before completions 3 and 6
  unsigned frame = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    const bool empty = k == 2 || k == 6;
    EXPECT_EQ(all[k].type, hw::kCqeRxOkay) << k;
    EXPECT_EQ(all[k].len[0] == 0, empty) << k;
    // Offsets count WQEs without gaps: the empty CQE names the WQE the next one completes.
    EXPECT_EQ(all[k].wqe_offset, frame * 32) << k;
    if (!empty) {
      EXPECT_EQ(all[k].len[0], 62u + frame) << k;
      ++frame;
    }
  }
  const QueueCounters q = b.counters();
  EXPECT_EQ(q.wqes, 7u);
  EXPECT_EQ(q.packets, 7u);
  EXPECT_EQ(q.cqes, 9u);
  EXPECT_EQ(q.zero_length_cqes, 2u);
}

TEST(HwZeroLengthCqe, CoalescedCompletionsGetACoalescedEmptyOne) {
  RxBench b(config_with([](HwBehaviour& hw) { hw.zero_length_cqe_every = 2; }, true));
  Frames frames;
  for (unsigned i = 0; i < 7; ++i) frames.push_back(build_frame(flow(17, false, 20 + i)));
  auto c = b.receive(frames);
  ASSERT_EQ(c.size(), 3u);
  for (const auto& x : c) EXPECT_EQ(x.type, hw::kCqeRxCoalesced4);
  EXPECT_EQ(c[0].len[3], frames[3].size());
  EXPECT_EQ(c[1].len[0] | c[1].len[1] | c[1].len[2] | c[1].len[3], 0u);
  EXPECT_EQ(c[1].wqe_offset, 4u * 32);
  EXPECT_EQ(c[2].len[0], frames[4].size());
  EXPECT_EQ(c[2].wqe_offset, 4u * 32);
  EXPECT_EQ(b.counters().zero_length_cqes, 1u);
  EXPECT_EQ(b.counters().wqes, 7u);
}

TEST(HwZeroLengthCqe, OffByDefault) {
  RxBench b(test_config(1));
  for (unsigned i = 0; i < 8; ++i) {
    auto c = b.receive({build_frame(flow())});
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NE(c[0].len[0], 0u);
  }
  EXPECT_EQ(b.counters().zero_length_cqes, 0u);
}

// Frames one byte over the vPort MTU (1500 + 14), and exactly at it.
struct OversizeCase {
  std::vector<uint8_t> over = build_frame(flow(17, false, 1500 - 28 + 1));
  std::vector<uint8_t> at = build_frame(flow(17, false, 1500 - 28));
};

TEST(HwRxOversize, DropTruncateOrDeliver) {
  const OversizeCase f;
  ASSERT_EQ(f.over.size(), 1515u);
  using O = HwBehaviour::RxOversize;
  for (unsigned queues : {1u, 2u}) {  // one queue: received straight into the posted buffer
    for (O mode : {O::kDrop, O::kTruncate, O::kDeliver}) {
      RxBench b(config_with([&](HwBehaviour& hw) { hw.rx_oversize = mode; }), queues);
      auto c = b.receive({f.over, f.at});
      const PortCounters p = b.d.dev().port_counters(0);
      EXPECT_EQ(p.rx_oversize, 1u);
      SCOPED_TRACE("queues " + std::to_string(queues) + " mode " + std::to_string(int(mode)));
      if (mode == O::kDrop) {
        ASSERT_EQ(c.size(), 1u);
        EXPECT_EQ(c[0].len[0], f.at.size());
        EXPECT_EQ(p.rx_mtu_drops, 1u);
        continue;
      }
      EXPECT_EQ(p.rx_mtu_drops, 0u);
      ASSERT_EQ(c.size(), 2u);
      EXPECT_EQ(c[0].type, mode == O::kTruncate ? hw::kCqeRxTruncated : hw::kCqeRxOkay);
      EXPECT_EQ(c[0].len[0], mode == O::kTruncate ? 0u : f.over.size());
      EXPECT_EQ(c[1].type, hw::kCqeRxOkay);
      EXPECT_EQ(c[1].len[0], f.at.size());
    }
  }
}

TEST(HwRxOversize, DeliverTruncatesWhatDoesNotFitTheBuffer) {
  const OversizeCase f;
  for (unsigned queues : {1u, 2u}) {
    RxBench b(
        config_with([](HwBehaviour& hw) { hw.rx_oversize = HwBehaviour::RxOversize::kDeliver; }),
        queues, 1024);
    auto c = b.receive({f.over});
    ASSERT_EQ(c.size(), 1u) << queues;
    EXPECT_EQ(c[0].type, hw::kCqeRxTruncated) << queues;
  }
}

}  // namespace
}  // namespace mana::emu::test
