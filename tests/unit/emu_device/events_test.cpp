// SPDX-License-Identifier: BSD-3-Clause
// Completion events (doc/hardware.md §2.7, §4.8, §6.4 arming), hot removal of the data path, and a
// pair wire between two ports built by make_wires.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "driver.h"
#include "frames.h"
#include "rx_common.h"

namespace mana::emu::test {
namespace {

FlowSpec udp(unsigned from, unsigned to) {
  FlowSpec f;
  f.src = {10, 1, 0, 1};
  f.dst = {10, 1, 0, 2};
  f.sport = 7;
  f.dport = 9;
  f.src_mac = port_mac(from);
  f.dst_mac = port_mac(to);
  return f;
}

// Events pending on a non-blocking eventfd (0 when none).
uint64_t take_events(int fd) {
  uint64_t v = 0;
  if (::read(fd, &v, sizeof(v)) != sizeof(v)) {
    EXPECT_EQ(errno, EAGAIN);
    return 0;
  }
  return v;
}

class EventTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(efd, 0); }
  void TearDown() override { ::close(efd); }
  void arm(CqRing& cq) {
    d.dev().ring(d.ctx, hw::kCqDoorbellOffset, hw::cq_doorbell(cq.id, cq.arm_index(), true));
  }
  void send_one() {
    tx.post_frame(build_frame(udp(0, 0)));
    tx.doorbell();
    d.dev().poll();
  }
  int efd = eventfd(0, EFD_NONBLOCK);
  Driver d{test_config(1)};
  TxQueue tx{d, 1, 4096, 64, efd};
};

TEST_F(EventTest, ArmedCqSignalsOnceAtTheNextCqe) {
  arm(tx.cq);
  d.dev().poll();
  EXPECT_EQ(take_events(efd), 0u);  // nothing beyond the consumer index yet
  send_one();
  EXPECT_EQ(take_events(efd), 1u);
  send_one();
  EXPECT_EQ(take_events(efd), 0u);  // one-shot
  // Armed behind the producer (two unconsumed CQEs): signalled at once.
  arm(tx.cq);
  d.dev().poll();
  EXPECT_EQ(take_events(efd), 1u);
  // Consume, re-arm at the new index: quiet until the next CQE, across a CQ wrap.
  while (tx.cq.next()) {
  }
  for (int round = 0; round < 70; ++round) {
    arm(tx.cq);
    d.dev().poll();
    ASSERT_EQ(take_events(efd), 0u) << round;
    send_one();
    ASSERT_EQ(take_events(efd), 1u) << round;
    ASSERT_NE(tx.cq.next(), nullptr);
  }
}

TEST_F(EventTest, UnarmedCqsAndCqDoorbellsWithoutArmNeverSignal) {
  send_one();
  d.dev().ring(d.ctx, hw::kCqDoorbellOffset, hw::cq_doorbell(tx.cq.id, tx.cq.arm_index(), false));
  send_one();
  EXPECT_EQ(take_events(efd), 0u);
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
}

TEST(DoorbellRing, StoresFromAnotherThreadAreAllApplied) {
  Driver d(test_config(1));
  TxQueue tx(d, 1, 8192, 256);
  ASSERT_EQ(tx.status, 0);
  constexpr unsigned kFrames = 200;
  const std::vector<uint8_t> frame = build_frame(udp(0, 0));
  std::thread driver([&] {
    for (unsigned i = 0; i < kFrames; ++i) {
      tx.post_frame(frame);
      tx.doorbell();
    }
  });
  unsigned completed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (completed < kFrames && std::chrono::steady_clock::now() < deadline) {
    d.dev().poll();
    while (const hw::Cqe* c = tx.cq.next()) {
      EXPECT_EQ(c->type(), hw::kCqeTxOkay);
      ++completed;
    }
  }
  driver.join();
  EXPECT_EQ(completed, kFrames);
  EXPECT_EQ(d.wire(0).sent.size(), kFrames);
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
}

TEST(DoorbellRing, MoreStoresThanTheQueueHoldsAreNotLost) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  tx.post_frame(build_frame(udp(0, 0)));
  constexpr unsigned kStores = 70000;  // beyond the 65536-entry doorbell queue
  for (unsigned i = 0; i < kStores; ++i) tx.doorbell();
  d.dev().poll();
  EXPECT_EQ(d.dev().sq_counters(tx.binding.sq_id).doorbells, kStores);
  EXPECT_EQ(d.wire(0).sent.size(), 1u);
}

TEST(HotRemoval, QueuesStopCompletingAndNewQueuesWorkAfterReAdd) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  RxSet rx(d, 1, 1);
  rx.post(0, 4, 2048);
  rx.doorbell(0);
  tx.post_frame(build_frame(udp(0, 0)));
  tx.doorbell();
  d.wire(0).incoming.push_back(build_frame(udp(0, 0)));
  d.dev().set_present(false);
  for (int i = 0; i < 4; ++i) d.dev().poll();
  EXPECT_EQ(tx.cq.next(), nullptr);
  EXPECT_EQ(rx.queues[0]->cq.next(), nullptr);
  EXPECT_TRUE(d.wire(0).sent.empty());

  d.dev().set_present(true);
  d.dev().poll();
  EXPECT_EQ(tx.cq.next(), nullptr);  // the old queues stay dead
  EXPECT_EQ(rx.queues[0]->cq.next(), nullptr);
  EXPECT_TRUE(d.wire(0).sent.empty());
  // Destroys of the old objects answer EIO (freed with the device); a new context works.
  ASSERT_EQ(d.dev().destroy_qp(tx.qp), EIO);
  ASSERT_EQ(d.dev().destroy_cq(tx.cq.handle), EIO);
  d.reopen();
  TxQueue fresh(d, 1);
  ASSERT_EQ(fresh.status, 0);
  fresh.post_frame(build_frame(udp(0, 0)));
  fresh.doorbell();
  d.dev().poll();
  const hw::Cqe* c = fresh.cq.next();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->type(), hw::kCqeTxOkay);
  EXPECT_EQ(d.wire(0).sent.size(), 1u);
}

TEST(PairWire, PortZeroTransmitsToPortOne) {
  VfConfig c = test_config(2);
  c.ports[0].wire = c.ports[1].wire = "pair";
  Driver d(c, 4 << 20, true);
  TxQueue tx(d, 1);
  RxSet rx(d, 2, 1);
  ASSERT_EQ(tx.status, 0);
  ASSERT_EQ(rx.status, 0);
  rx.post(0, 32, 2048);
  rx.doorbell(0);
  std::vector<std::vector<uint8_t>> frames;
  for (unsigned i = 0; i < 20; ++i) {
    FlowSpec f = udp(0, 1);
    f.payload = 18 + i;
    frames.push_back(build_frame(f));
    tx.post_frame(frames.back());
  }
  tx.doorbell();
  std::vector<RxCompletion> got;
  ASSERT_TRUE(d.poll_until([&] {
    for (auto& r : drain_rx(rx.queues[0]->cq)) got.push_back(r);
    return got.size() == frames.size();
  }));
  for (unsigned i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(got[i].len[0], frames[i].size());
    EXPECT_EQ(std::memcmp(rx.queues[0]->posted[i], frames[i].data(), frames[i].size()), 0);
  }
  EXPECT_EQ(d.dev().port_counters(0).tx_frames, 20u);
  EXPECT_EQ(d.dev().port_counters(1).rx_frames, 20u);
}

}  // namespace
}  // namespace mana::emu::test
