// SPDX-License-Identifier: BSD-3-Clause
// A doorbell stored just before the destroy call of its queue (a driver stopping a port right
// after its last burst) is taken by the queue before it goes away: it is not a bad doorbell, in
// trap mode (queued by Device::ring) and in poll mode (written into the page, not yet sampled),
// with the device thread idle or polling concurrently. A doorbell after the destroy still is.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "driver.h"
#include "frames.h"

namespace mana::emu::test {
namespace {

constexpr unsigned kCycles = 300;

// One port's queues, created, rung (SQ, RQ, CQ arm) and destroyed at once, `cycles` times.
void ring_then_destroy(Driver& d, unsigned cycles, bool polled) {
  auto* page = reinterpret_cast<uint64_t*>(d.page.data());
  // A polling device loads the slots with acquire: store them with release (ThreadSanitizer).
  auto store = [&](uint32_t offset, uint64_t value) {
    std::atomic_ref<uint64_t>(page[offset / 8]).store(value, std::memory_order_release);
  };
  for (unsigned i = 0; i < cycles; ++i) {
    TxQueue tx(d, 1);
    ASSERT_EQ(tx.status, 0) << "cycle " << i;
    RxSet rx(d, 1, 1);
    ASSERT_EQ(rx.status, 0) << "cycle " << i;
    rx.post(0, 1);
    tx.post_frame(build_non_ip(port_mac(0), port_mac(0), 0x88b5, 60));
    const uint64_t sq_db = hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * hw::kBasicUnit);
    const uint64_t rq_db =
        hw::rq_doorbell(rx.queues[0]->id, rx.queues[0]->head_bu * hw::kBasicUnit, 0);
    const uint64_t cq_db = hw::cq_doorbell(tx.cq.id, tx.cq.arm_index(), true);
    if (polled) {
      store(hw::kSqDoorbellOffset, sq_db);
      store(hw::kRqDoorbellOffset, rq_db);
      store(hw::kCqDoorbellOffset, cq_db);
    } else {
      d.dev().ring(d.ctx, hw::kSqDoorbellOffset, sq_db);
      d.dev().ring(d.ctx, hw::kRqDoorbellOffset, rq_db);
      d.dev().ring(d.ctx, hw::kCqDoorbellOffset, cq_db);
    }
    ASSERT_EQ(d.dev().destroy_qp(rx.qp), 0);
    ASSERT_EQ(d.dev().destroy_qp(tx.qp), 0);
    ASSERT_EQ(d.dev().destroy_wq(rx.queues[0]->wq), 0);
    ASSERT_EQ(d.dev().destroy_cq(rx.queues[0]->cq.handle), 0);
    ASSERT_EQ(d.dev().destroy_cq(tx.cq.handle), 0);
  }
}

void expect_no_bad_doorbell(bool polled, bool device_thread) {
  Driver d(test_config(1));
  d.dev().set_poll_doorbells(polled);
  std::atomic<bool> stop{false};
  std::thread poller;
  if (device_thread) {
    poller = std::thread([&] {
      while (!stop.load(std::memory_order_relaxed)) d.dev().poll();
    });
  }
  ring_then_destroy(d, kCycles, polled);
  stop = true;
  if (poller.joinable()) poller.join();
  d.dev().poll();
  std::printf("%u ring-then-destroy cycles (%s doorbells, %s device thread)\n", kCycles,
              polled ? "polled" : "queued", device_thread ? "with a" : "no");
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
}

TEST(DestroyDoorbells, QueuedDoorbellReachesItsQueueBeforeTheDestroy) {
  expect_no_bad_doorbell(false, false);
}
TEST(DestroyDoorbells, QueuedDoorbellWithTheDeviceThreadPolling) {
  expect_no_bad_doorbell(false, true);
}
TEST(DestroyDoorbells, PolledDoorbellIsSampledBeforeTheDestroy) {
  expect_no_bad_doorbell(true, false);
}
TEST(DestroyDoorbells, PolledDoorbellWithTheDeviceThreadPolling) {
  expect_no_bad_doorbell(true, true);
}

// The fix must not hide a real bad doorbell: one for a queue destroyed before the store counts.
TEST(DestroyDoorbells, DoorbellAfterTheDestroyIsStillBad) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  tx.post_frame(build_non_ip(port_mac(0), port_mac(0), 0x88b5, 60));
  ASSERT_EQ(d.dev().destroy_qp(tx.qp), 0);
  tx.doorbell();
  d.dev().poll();
  EXPECT_EQ(d.dev().bad_doorbells(), 1u);
}

}  // namespace
}  // namespace mana::emu::test
