// SPDX-License-Identifier: BSD-3-Clause
// The device thread hands doorbells to the device in the order they were stored, across contexts
// (doc/hardware.md §4.8, "Order across queues"): a store made while the thread is between two trap
// FIFOs must not let the device see a later doorbell of one context without an earlier one of the
// other. A recording device stands for the NIC; lockstep passes make the interleaving exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <utility>
#include <vector>

#include "../emu_tool/fake_device.h"
#include "device/device_thread.h"

namespace mana::emu::test {
namespace {

constexpr uint32_t kCtxA = 1, kCtxB = 2;  // e.g. port 0's RQ, port 1's SQ

// Records the doorbells handed to it and what it had when it polled. Its first doorbell of B
// stands for the moment the device thread, done with FIFO A, is about to drain B: `on_first_b`
// lets the producer store meanwhile, as a preempted device thread lets a driver do.
class RecordingDevice : public testing::FakeDevice {
 public:
  RecordingDevice() : FakeDevice(VfConfig{}) {}
  std::vector<uint64_t> rung;
  std::vector<std::vector<uint64_t>> seen_at_poll;
  std::function<void()> on_first_b;

  void ring(uint32_t context_id, uint32_t, uint64_t value) override {
    rung.push_back(value);
    if (context_id == kCtxB && on_first_b) std::exchange(on_first_b, nullptr)();
  }
  unsigned poll() override {
    seen_at_poll.push_back(rung);
    return 0;
  }
  bool saw(uint64_t value, size_t at_poll) const {
    const auto& s = seen_at_poll.at(at_poll);
    return std::find(s.begin(), s.end(), value) != s.end();
  }
};

struct Fifo {
  void* mem = std::aligned_alloc(64, (doorbell::DoorbellFifo::bytes(16) + 63) & ~size_t{63});
  doorbell::DoorbellFifo* fifo = doorbell::DoorbellFifo::init(mem, 16);
  ~Fifo() { std::free(mem); }
};

TEST(DeviceThreadOrder, AStoreMadeBetweenTwoFifosReachesTheDeviceWithTheStoresAfterIt) {
  Fifo a, b;
  ASSERT_NE(a.fifo, nullptr);
  ASSERT_NE(b.fifo, nullptr);
  RecordingDevice dev;
  DeviceThread thread;
  thread.set_lockstep(true);
  thread.add_device(&dev);
  ASSERT_TRUE(thread.add_fifo(&dev, a.fifo));  // drained first
  ASSERT_TRUE(thread.add_fifo(&dev, b.fifo));
  // The driver's order: RQ doorbell a1, SQ doorbell b1, then (while the device thread is between
  // the FIFOs) RQ doorbell a2 and the SQ doorbell b2 of the frames a2's buffers made room for.
  a.fifo->push({kCtxA, 0x400, 0xa1});
  b.fifo->push({kCtxB, 0x000, 0xb1});
  dev.on_first_b = [&] {
    a.fifo->push({kCtxA, 0x400, 0xa2});
    b.fifo->push({kCtxB, 0x000, 0xb2});
  };
  thread.step();
  ASSERT_EQ(dev.seen_at_poll.size(), 1u);
  ASSERT_TRUE(dev.saw(0xb2, 0)) << "the store after the interleaving was not drained";
  EXPECT_TRUE(dev.saw(0xa2, 0))
      << "the device polled with SQ doorbell b2 but without RQ doorbell a2 stored before it";
  EXPECT_EQ(dev.rung.size(), 4u);
  thread.remove_fifo(a.fifo);
  thread.remove_fifo(b.fifo);
}

}  // namespace
}  // namespace mana::emu::test
