// SPDX-License-Identifier: BSD-3-Clause
// RX data path: delivery across wraps, address filter, MTU, VLAN strip, checksum verification,
// buffer checks and their error CQEs, CQE coalescing (doc/hardware.md §4.7, §4.9, §4.10, §6.4).
#include <gtest/gtest.h>

#include <cstring>

#include "driver.h"
#include "frames.h"
#include "rx_common.h"

namespace mana::emu::test {
namespace {

using C = hw::Cqe;

FlowSpec flow_to(unsigned port, uint8_t proto = 17, uint32_t payload = 18) {
  FlowSpec f;
  f.proto = proto;
  f.src = {192, 168, 1, 1};
  f.dst = {192, 168, 1, 2};
  f.sport = 4321;
  f.dport = 80;
  f.payload = payload;
  f.src_mac = {0x02, 0, 0, 0, 0, 0x99};
  f.dst_mac = port_mac(port);
  return f;
}

class RxTest : public ::testing::Test {
 protected:
  explicit RxTest(const VfConfig& config = test_config(1)) : d(config), rx(d, 1, 1) {}
  Driver d;
  RxSet rx;
  RxQueue& q() { return *rx.queues[0]; }
  std::vector<RxCompletion> receive(const std::vector<std::vector<uint8_t>>& frames) {
    for (const auto& f : frames) d.wire(0).incoming.push_back(f);
    d.dev().poll();
    return drain_rx(q().cq);
  }
};

TEST_F(RxTest, DeliversInOrderAcrossManyRingAndCqWraps) {
  ASSERT_EQ(rx.status, 0);
  rx.post(0, 100, 256);
  rx.doorbell(0);
  const unsigned total = 64 * 9 + 7;  // the 64-entry CQ wraps 9 times, the 128-WQE RQ 4 times
  for (unsigned i = 0; i < total; ++i) {
    std::vector<uint8_t> f = build_frame(flow_to(0, 17, 20 + i % 100));
    f.back() = static_cast<uint8_t>(i);
    auto c = receive({f});
    ASSERT_EQ(c.size(), 1u) << i;
    EXPECT_EQ(c[0].type, hw::kCqeRxOkay);
    EXPECT_EQ(c[0].wq, q().id);
    EXPECT_EQ(c[0].is_sq, 0u);
    EXPECT_EQ(c[0].len[0], f.size());
    EXPECT_EQ(c[0].len[1] | c[0].len[2] | c[0].len[3], 0u);
    EXPECT_EQ(c[0].wqe_offset, i * 32);
    EXPECT_EQ(std::memcmp(q().posted[i], f.data(), f.size()), 0);
    rx.post(0, 1, 256);  // repost, as a driver does
    rx.doorbell(0);
    if (d.arena_size() - (q().posted.back() - d.arena()) < 4096) d.reset_arena();
  }
  QueueCounters qc = d.dev().rq_counters(q().id);
  EXPECT_EQ(qc.packets, total);
  EXPECT_EQ(qc.wqes, total);
  EXPECT_EQ(qc.cqes, total);
}

TEST_F(RxTest, FiltersByAddressAndMtuAndCountsMissingWqes) {
  std::vector<uint8_t> other = build_frame(flow_to(0));
  other[5] ^= 1;  // another unicast MAC
  std::vector<uint8_t> bcast = build_frame(flow_to(0));
  std::memset(bcast.data(), 0xFF, 6);
  std::vector<uint8_t> mcast = build_frame(flow_to(0));
  const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  std::memcpy(mcast.data(), group, 6);
  auto c = receive({other, bcast, mcast});  // nothing posted yet
  EXPECT_TRUE(c.empty());
  PortCounters p = d.dev().port_counters(0);
  EXPECT_EQ(p.rx_filtered, 1u);
  EXPECT_EQ(p.rx_no_wqe_drops, 2u);
  EXPECT_EQ(p.rx_frames, 3u);

  rx.post(0, 8, 2048);
  rx.doorbell(0);
  FlowSpec tagged = flow_to(0, 17, 1500 - 28);
  tagged.vlan_tci = 3;
  c = receive({other, bcast, mcast, build_frame(flow_to(0, 17, 1500 - 28)),
               build_frame(flow_to(0, 17, 1500 - 27)), build_frame(tagged)});
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[2].len[0], 1514u);
  EXPECT_EQ(c[3].len[0], 1514u);  // tag stripped
  p = d.dev().port_counters(0);
  EXPECT_EQ(p.rx_filtered, 2u);
  EXPECT_EQ(p.rx_mtu_drops, 1u);
  EXPECT_EQ(p.rx_no_wqe_drops, 2u);
}

TEST_F(RxTest, StripsVlanTagAndReportsVid) {
  rx.post(0, 2, 2048);
  rx.doorbell(0);
  FlowSpec f = flow_to(0);
  f.vlan_tci = (6 << 13) | 0x123;
  auto c = receive({build_frame(f), build_frame(flow_to(0))});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(C::RxVlanPresent::get(c[0].dw1), 1u);
  EXPECT_EQ(C::RxVlanId::get(c[0].dw1), 0x123u);
  const std::vector<uint8_t> untagged = build_frame(flow_to(0));
  ASSERT_EQ(c[0].len[0], untagged.size());
  EXPECT_EQ(std::memcmp(q().posted[0], untagged.data(), untagged.size()), 0);
  EXPECT_EQ(C::RxVlanPresent::get(c[1].dw1), 0u);
  EXPECT_EQ(C::RxVlanId::get(c[1].dw1), 0u);
}

TEST_F(RxTest, ChecksumVerificationFlags) {
  rx.post(0, 16, 2048);
  rx.doorbell(0);
  FlowSpec tcp6 = flow_to(0, 6);
  tcp6.ipv6 = true;
  tcp6.src = {0x20, 0x01, 0x0d, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  tcp6.dst = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  std::vector<uint8_t> bad_ip = build_frame(flow_to(0));
  bad_ip[kL3 + 10] ^= 0x40;
  std::vector<uint8_t> bad_tcp = build_frame(flow_to(0, 6));
  bad_tcp.back() ^= 1;
  std::vector<uint8_t> bad_tcp6 = build_frame(tcp6);
  bad_tcp6[l4_checksum_offset(tcp6)] ^= 0x10;
  std::vector<uint8_t> no_udp_sum = build_frame(flow_to(0));
  store_be16(&no_udp_sum[l4_checksum_offset(flow_to(0))], 0);
  auto c = receive({build_frame(flow_to(0)), build_frame(flow_to(0, 6)), build_frame(tcp6), bad_ip,
                    bad_tcp, bad_tcp6, no_udp_sum, build_frame(flow_to(0, 47))});
  ASSERT_EQ(c.size(), 8u);
  const uint32_t mask = (0x3Fu << 25) | (3u << 13);
  auto bits = [&](int i) { return c[i].dw1 & mask; };
  const uint32_t ip_ok = C::RxIpCsumOk::set(0, 1), ip_fail = C::RxIpCsumFail::set(0, 1);
  const uint32_t tcp_ok = C::RxTcpCsumOk::set(0, 1), tcp_fail = C::RxTcpCsumFail::set(0, 1);
  const uint32_t udp_ok = C::RxUdpCsumOk::set(0, 1);
  EXPECT_EQ(bits(0), ip_ok | udp_ok);
  EXPECT_EQ(bits(1), ip_ok | tcp_ok);
  EXPECT_EQ(bits(2), ip_ok | tcp_ok);  // hw ipv6-ip-csum=on (the default): a valid IPv6 header
  EXPECT_EQ(bits(3) & (ip_ok | ip_fail), ip_fail);
  EXPECT_EQ(bits(4), ip_ok | tcp_fail);
  EXPECT_EQ(bits(5), ip_ok | tcp_fail);
  EXPECT_EQ(bits(6), ip_ok);  // IPv4 UDP without a checksum: nothing to verify
  EXPECT_EQ(bits(7), ip_ok);  // GRE: no L4 checksum
}

TEST_F(RxTest, BufferChecksAndTruncation) {
  const std::vector<uint8_t> f = build_frame(flow_to(0, 17, 82));  // 124 bytes
  uint8_t* small = d.alloc(64);
  rx.post_sgl(0, {{reinterpret_cast<uint64_t>(small), d.lkey, 64}}, small);
  // Scatter over three SGEs.
  uint8_t* parts[3] = {d.alloc(50), d.alloc(50), d.alloc(50)};
  std::vector<hw::Sge> sgl;
  for (uint8_t* p : parts) sgl.push_back({reinterpret_cast<uint64_t>(p), d.lkey, 50});
  rx.post_sgl(0, sgl, parts[0]);
  // An MR without LOCAL_WRITE, an unknown key, a range outside the MR, the dummy SGE.
  uint8_t* buf = d.alloc(2048);
  uint32_t ro = 0;
  ASSERT_EQ(d.dev().reg_mr(d.pd, reinterpret_cast<uint64_t>(buf), 2048, 0, &ro), 0);
  rx.post_sgl(0, {{reinterpret_cast<uint64_t>(buf), ro, 2048}}, buf);
  rx.post_sgl(0, {{reinterpret_cast<uint64_t>(buf), d.lkey + 7, 2048}}, buf);
  rx.post_sgl(0, {{reinterpret_cast<uint64_t>(d.arena()) + d.arena_size() - 100, d.lkey, 2048}},
              buf);
  rx.post_sgl(0, {}, buf);
  rx.doorbell(0);
  auto c = receive({f, f, f, f, f, f});
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0].type, hw::kCqeRxTruncated);
  EXPECT_EQ(c[0].vendor_err, 0u);
  EXPECT_EQ(c[1].type, hw::kCqeRxOkay);
  EXPECT_EQ(c[1].len[0], f.size());
  EXPECT_EQ(std::memcmp(parts[0], f.data(), 50), 0);
  EXPECT_EQ(std::memcmp(parts[1], f.data() + 50, 50), 0);
  EXPECT_EQ(std::memcmp(parts[2], f.data() + 100, f.size() - 100), 0);
  for (int i = 2; i < 5; ++i) {
    EXPECT_EQ(c[i].type, hw::kCqeRxTruncated) << i;
    EXPECT_EQ(c[i].vendor_err, hw::kVendorErrAddrRange) << i;
  }
  EXPECT_EQ(c[5].type, hw::kCqeRxTruncated);  // a dummy SGE has no room
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c[i].wqe_offset, (i == 0 ? 0u : i == 1 ? 1u : i + 1u) * 32);
  QueueCounters qc = d.dev().rq_counters(q().id);
  EXPECT_EQ(qc.error_cqes, 5u);
  EXPECT_EQ(qc.packets, 1u);
  EXPECT_EQ(qc.wqes, 6u);
}

TEST_F(RxTest, InjectedFaults) {
  rx.post(0, 4, 2048);
  rx.doorbell(0);
  d.dev().inject({Fault::Kind::kBadLkey, false, 0, 1, 0});
  const std::vector<uint8_t> f = build_frame(flow_to(0));
  auto c = receive({f, f});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].type, hw::kCqeRxTruncated);
  EXPECT_EQ(c[0].vendor_err, hw::kVendorErrAddrRange);
  EXPECT_EQ(c[1].type, hw::kCqeRxOkay);
  d.dev().inject({Fault::Kind::kErrorCqe, false, 0, 1, hw::kCqeRxTruncated});
  c = receive({f});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeRxTruncated);
  EXPECT_EQ(c[0].wqe_offset, 2u * 32);
  EXPECT_EQ(d.dev().rq_counters(q().id).wqes, 3u);
}

// An object fence or an unknown type consumes no RQ WQE (the kernel's mana_process_rx_cqe,
// doc/hardware.md §4.7): the injected CQE goes before the frame's own completion, which still
// gets the next WQE.
TEST_F(RxTest, InjectedFenceAndUnknownCqesConsumeNoWqe) {
  rx.post(0, 4, 2048);
  rx.doorbell(0);
  const std::vector<uint8_t> f = build_frame(flow_to(0));
  d.dev().inject({Fault::Kind::kErrorCqe, false, 0, 1, hw::kCqeRxObjectFence});
  auto c = receive({f});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].type, hw::kCqeRxObjectFence);
  EXPECT_EQ(c[1].type, hw::kCqeRxOkay);
  EXPECT_EQ(c[1].len[0], f.size());
  EXPECT_EQ(c[1].wqe_offset, 0u);
  d.dev().inject({Fault::Kind::kErrorCqe, false, 0, 1, 63});
  c = receive({f});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].type, 63u);
  EXPECT_EQ(c[1].type, hw::kCqeRxOkay);
  EXPECT_EQ(c[1].wqe_offset, 32u);
  const QueueCounters qc = d.dev().rq_counters(q().id);
  EXPECT_EQ(qc.wqes, 2u);
  EXPECT_EQ(qc.packets, 2u);
}

TEST_F(RxTest, RqDoorbellWithWqeCountIsAcceptedAndCounted) {
  rx.post(0, 2, 2048);
  rx.doorbell(0, 2);
  auto c = receive({build_frame(flow_to(0)), build_frame(flow_to(0))});
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(d.dev().rq_counters(q().id).wqe_cnt_doorbells, 1u);
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
}

class RxCoalescingTest : public RxTest {
 protected:
  RxCoalescingTest() : RxTest(coalescing_config()) {}
  // One queue that still reports hashes, so that frames of another hash type differ in metadata.
  static VfConfig coalescing_config() {
    VfConfig c = test_config(1, true);
    c.hw.single_queue_hash = true;
    return c;
  }
};

TEST_F(RxCoalescingTest, UpToFourFramesWithTheSameMetadataShareACqe) {
  rx.post(0, 16, 2048);
  rx.doorbell(0);
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t i = 0; i < 6; ++i) frames.push_back(build_frame(flow_to(0, 17, 20 + i)));
  frames.push_back(build_frame(flow_to(0, 6)));  // TCP: another hash type, its own CQE
  auto c = receive(frames);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].type, hw::kCqeRxCoalesced4);
  for (unsigned k = 0; k < 4; ++k) EXPECT_EQ(c[0].len[k], frames[k].size());
  EXPECT_EQ(c[0].hash[0], c[0].hash[1]);  // same flow
  EXPECT_NE(c[0].hash[0], 0u);
  EXPECT_EQ(c[0].wqe_offset, 0u);
  EXPECT_EQ(c[1].type, hw::kCqeRxCoalesced4);
  EXPECT_EQ(c[1].len[0], frames[4].size());
  EXPECT_EQ(c[1].len[1], frames[5].size());
  EXPECT_EQ(c[1].len[2] | c[1].len[3] | c[1].hash[2] | c[1].hash[3], 0u);
  EXPECT_EQ(c[1].wqe_offset, 4u * 32);
  EXPECT_EQ(c[2].len[0], frames[6].size());
  EXPECT_EQ(c[2].len[1], 0u);
  EXPECT_NE(C::RxHashType::get(c[2].dw1), C::RxHashType::get(c[0].dw1));
  for (unsigned k = 0; k < 7; ++k)
    EXPECT_EQ(std::memcmp(q().posted[k], frames[k].data(), frames[k].size()), 0);
  EXPECT_EQ(d.dev().rq_counters(q().id).cqes, 3u);
  EXPECT_EQ(d.dev().rq_counters(q().id).packets, 7u);
}

TEST_F(RxCoalescingTest, ErrorsCloseTheCoalescedCqeFirst) {
  rx.post(0, 1, 2048);
  uint8_t* small = d.alloc(32);
  rx.post_sgl(0, {{reinterpret_cast<uint64_t>(small), d.lkey, 32}}, small);
  rx.post(0, 1, 2048);
  rx.doorbell(0);
  const std::vector<uint8_t> f = build_frame(flow_to(0));
  auto c = receive({f, f, f});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].type, hw::kCqeRxCoalesced4);
  EXPECT_EQ(c[0].len[1], 0u);
  EXPECT_EQ(c[1].type, hw::kCqeRxTruncated);
  EXPECT_EQ(c[2].type, hw::kCqeRxCoalesced4);
}

}  // namespace
}  // namespace mana::emu::test
