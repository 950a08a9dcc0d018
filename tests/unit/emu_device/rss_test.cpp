// SPDX-License-Identifier: BSD-3-Clause
// RSS steering (doc/hardware.md §2.5, §4.10): Toeplitz over the NDIS input with the QP's key, queue
// = indirection[hash & 63] with entry i = ind_tbl[i mod 2^log], non-IP to the last queue, one NDIS
// hash-type bit. Expected hashes come from mana::toeplitz_hash over inputs built here.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "driver.h"
#include "frames.h"
#include "mana/toeplitz.h"
#include "rx_common.h"

namespace mana::emu::test {
namespace {

struct Expected {
  uint32_t hash = 0;
  uint32_t type = 0;
};

Expected expected_for(const FlowSpec& f, bool fragment, const uint8_t* key) {
  std::vector<uint8_t> in;
  const unsigned addr = f.ipv6 ? 16 : 4;
  in.insert(in.end(), f.src.begin(), f.src.begin() + addr);
  in.insert(in.end(), f.dst.begin(), f.dst.begin() + addr);
  Expected e;
  if (!fragment && (f.proto == 6 || f.proto == 17)) {
    const uint8_t ports[4] = {uint8_t(f.sport >> 8), uint8_t(f.sport), uint8_t(f.dport >> 8),
                              uint8_t(f.dport)};
    in.insert(in.end(), ports, ports + 4);
    e.type = f.proto == 6 ? (f.ipv6 ? hw::kHashTcpIpv6 : hw::kHashTcpIpv4)
                          : (f.ipv6 ? hw::kHashUdpIpv6 : hw::kHashUdpIpv4);
  } else {
    e.type = f.ipv6 ? hw::kHashIpv6 : hw::kHashIpv4;
  }
  e.hash = toeplitz_hash(key, 40, in.data(), in.size());
  return e;
}

class RssTest : public ::testing::TestWithParam<unsigned> {};

TEST_P(RssTest, FlowsLandOnTheQueueTheirHashSelects) {
  const unsigned n = GetParam();
  uint8_t key[40];
  for (unsigned i = 0; i < 40; ++i) key[i] = static_cast<uint8_t>(i * 37 + 11);
  Driver d(test_config(1));
  RxSet rx(d, 1, n, key, 8192, 256);
  ASSERT_EQ(rx.status, 0);
  for (unsigned q = 0; q < n; ++q) {
    rx.post(q, 200, 256);
    rx.doorbell(q);
  }
  std::vector<unsigned> expected_queue;
  std::vector<Expected> expected;
  std::set<unsigned> used;
  for (unsigned i = 0; i < 200; ++i) {
    FlowSpec f;
    f.ipv6 = (i / 4) % 2;
    const unsigned kind = i % 4;
    f.proto = kind == 0 ? 6 : kind == 1 ? 17 : 47;
    for (unsigned b = 0; b < 16; ++b) {
      f.src[b] = static_cast<uint8_t>(i * 13 + b);
      f.dst[b] = static_cast<uint8_t>(i * 7 + 3 * b);
    }
    f.sport = static_cast<uint16_t>(1024 + i * 101);
    f.dport = static_cast<uint16_t>(80 + i);
    f.dst_mac = port_mac(0);
    std::vector<uint8_t> frame = build_frame(f);
    const bool fragment = kind == 3 && !f.ipv6;
    if (kind == 3) {
      if (f.ipv6) {
        frame = build_non_ip(port_mac(0), f.src_mac, 0x88CC, 60);  // LLDP: not IP
      } else {
        f.proto = 17;
        frame = build_frame(f);
        frame[kL3 + 6] = 0x20;  // more fragments: hashed on addresses only
      }
    }
    d.wire(0).incoming.push_back(frame);
    Expected e;
    unsigned queue = n - 1;  // non-IP: the default queue, the table's last
    // A one-entry table: RSS off on the vPort, no hash (hw single-queue-hash=off, the default).
    if (!(kind == 3 && f.ipv6) && n > 1) {
      e = expected_for(f, fragment, key);
      queue = (e.hash & 63) % n;
    }
    expected.push_back(e);
    expected_queue.push_back(queue);
    used.insert(queue);
    d.dev().poll();
    bool found = false;
    for (unsigned q = 0; q < n; ++q) {
      auto c = drain_rx(rx.queues[q]->cq);
      if (c.empty()) continue;
      ASSERT_EQ(c.size(), 1u);
      EXPECT_EQ(q, queue) << "flow " << i;
      EXPECT_EQ(c[0].type, hw::kCqeRxOkay);
      EXPECT_EQ(c[0].hash[0], e.hash) << "flow " << i;
      EXPECT_EQ(hw::Cqe::RxHashType::get(c[0].dw1), e.type) << "flow " << i;
      EXPECT_EQ(c[0].len[0], frame.size());
      found = true;
    }
    EXPECT_TRUE(found) << "flow " << i;
  }
  if (n >= 4 && n <= 8) {
    EXPECT_EQ(used.size(), n);  // 200 flows reach every queue
  }
}

INSTANTIATE_TEST_SUITE_P(TableSizes, RssTest, ::testing::Values(1u, 2u, 8u, 64u));

TEST(RssTable, EntriesRepeatTheIndirectionTableAndTheLastWqIsTheDefault) {
  // A 4-entry table listing queue 0 three times and queue 1 last.
  Driver d(test_config(1));
  std::vector<std::unique_ptr<RxQueue>> qs;
  qs.push_back(std::make_unique<RxQueue>(d, 4096, 64));
  qs.push_back(std::make_unique<RxQueue>(d, 4096, 64));
  const uint32_t wqs[4] = {qs[0]->wq, qs[0]->wq, qs[0]->wq, qs[1]->wq};
  RqBinding out[4];
  uint32_t qp = 0;
  ASSERT_EQ(d.dev().create_rss_qp(d.ctx, d.pd, 1, wqs, 2, 1, kDefaultRssKey, 40, out, &qp), 0);
  EXPECT_EQ(out[0].wq_id, out[1].wq_id);
  EXPECT_EQ(out[0].cq_id, out[2].cq_id);
  EXPECT_NE(out[3].wq_id, out[0].wq_id);
  // Non-IP goes to queue 1 (the last entry) only.
  const uint32_t ids[2] = {out[0].wq_id, out[3].wq_id};
  for (int i = 0; i < 2; ++i) {
    qs[i]->id = ids[i];
    qs[i]->cq.id = i == 0 ? out[0].cq_id : out[3].cq_id;
    uint8_t* buf = d.alloc(256);
    hw::WqeHeader h = hw::WqeHeader::make(1, 8);
    std::memcpy(qs[i]->ring.data(), &h, sizeof(h));
    const hw::Sge sge{reinterpret_cast<uint64_t>(buf), d.lkey, 256};
    std::memcpy(qs[i]->ring.data() + 16, &sge, sizeof(sge));
    d.dev().ring(d.ctx, hw::kRqDoorbellOffset, hw::rq_doorbell(ids[i], 32));
  }
  d.wire(0).incoming.push_back(build_non_ip(port_mac(0), port_mac(1), 0x88B5, 64));
  d.dev().poll();
  EXPECT_TRUE(drain_rx(qs[0]->cq).empty());
  auto c = drain_rx(qs[1]->cq);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(hw::Cqe::RxHashType::get(c[0].dw1), 0u);
  EXPECT_EQ(c[0].hash[0], 0u);
}

TEST(RssTable, FramesLargerThanTheSteeredBufferAreTruncated) {
  Driver d(test_config(1));
  RxSet rx(d, 1, 2);
  ASSERT_EQ(rx.status, 0);
  for (unsigned q = 0; q < 2; ++q) {
    rx.post(q, 1, 32);
    rx.post(q, 1, 2048);
    rx.doorbell(q);
  }
  FlowSpec f;
  f.src = {1, 2, 3, 4};
  f.dst = {5, 6, 7, 8};
  f.dst_mac = port_mac(0);
  const std::vector<uint8_t> frame = build_frame(f);
  d.wire(0).incoming.push_back(frame);
  d.wire(0).incoming.push_back(frame);
  d.dev().poll();
  std::vector<RxCompletion> got;
  for (auto& q : rx.queues)
    for (auto& c : drain_rx(q->cq)) got.push_back(c);
  ASSERT_EQ(got.size(), 2u);  // one flow: both on the same queue
  EXPECT_EQ(got[0].type, hw::kCqeRxTruncated);
  EXPECT_EQ(got[0].vendor_err, 0u);
  EXPECT_EQ(got[1].type, hw::kCqeRxOkay);
  EXPECT_EQ(got[1].len[0], frame.size());
  EXPECT_EQ(got[0].wq, got[1].wq);
}

}  // namespace
}  // namespace mana::emu::test
