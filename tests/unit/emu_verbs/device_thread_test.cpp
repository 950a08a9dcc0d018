// SPDX-License-Identifier: BSD-3-Clause
// The verbs layer's device thread without the preloaded library (so that ThreadSanitizer can run
// it: suite tsan): a producer thread posts TX WQEs and pushes their doorbells into a trap FIFO, as
// the SIGSEGV handler does; the device thread drains the FIFO into Device::ring and polls the
// device; a control thread settles the FIFOs meanwhile. Every WQE is consumed, and a doorbell
// pushed just before a destroy reaches its queue (no bad doorbell).
#include "device/device_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "../emu_device/driver.h"
#include "../emu_device/frames.h"

namespace mana::emu::test {
namespace {

constexpr uint32_t kFrames = 3000;
constexpr uint32_t kInFlight = 64;  // WQEs (1 BU each) posted ahead of the device: half the ring

// Waits (bounded) until `pred` holds; false after 20 s.
template <typename Pred>
bool wait_until(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// One device with one TX queue and a trap FIFO, as a verbs context has; WQEs are posted with CQE
// suppression (nobody consumes the CQ here) and their doorbells pushed as the SIGSEGV handler does.
struct FifoRig {
  Driver d{test_config(1)};
  TxQueue tx{d, 1};
  void* mem = std::aligned_alloc(64, (doorbell::DoorbellFifo::bytes(64) + 63) & ~size_t{63});
  doorbell::DoorbellFifo* fifo = doorbell::DoorbellFifo::init(mem, 64);
  const std::vector<uint8_t> frame = build_non_ip(port_mac(0), port_mac(0), 0x88b5, 60);

  ~FifoRig() { std::free(mem); }
  bool ready() const { return tx.status == 0 && fifo != nullptr; }
  uint64_t consumed() { return d.dev().sq_counters(tx.binding.sq_id).wqes; }
  void post_and_ring() {
    TxOptions quiet;
    quiet.suppress = true;
    tx.post_frame(frame, quiet);
    fifo->push({d.ctx, hw::kSqDoorbellOffset,
                hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * hw::kBasicUnit)});
  }
};

TEST(DeviceThread, DrainsTrapFifosWhileProducersPushAndSettles) {
  FifoRig rig;
  ASSERT_TRUE(rig.ready());
  Driver& d = rig.d;
  DeviceThread thread;
  thread.add_device(&d.dev());
  ASSERT_TRUE(thread.add_fifo(&d.dev(), rig.fifo));
  auto consumed = [&] { return rig.consumed(); };
  std::atomic<bool> producing{true};
  std::thread settler([&] {
    while (producing.load()) thread.settle();
  });
  bool stalled = false;
  for (uint32_t i = 0; i < kFrames && !stalled; ++i) {
    stalled = !wait_until([&] { return i - consumed() < kInFlight; });
    rig.post_and_ring();
  }
  EXPECT_FALSE(stalled) << "the device thread stopped consuming WQEs";
  EXPECT_TRUE(wait_until([&] { return consumed() == kFrames; }))
      << "waited 20 s for " << kFrames << " WQEs consumed, got " << consumed();
  producing = false;
  settler.join();

  // The last doorbell rung right before the destroy call: settle() hands it over first.
  rig.post_and_ring();
  EXPECT_TRUE(thread.settle());
  EXPECT_EQ(d.dev().destroy_qp(rig.tx.qp), 0);
  thread.remove_fifo(rig.fifo);
  thread.stop();
  std::printf("%u WQEs through the trap FIFO and the device thread\n", kFrames);
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
}

// Lockstep mode (doc/emulator.md "Lockstep"): no thread; a WQE whose doorbell sits in the trap
// FIFO is consumed by the step() call that follows, and by nothing else.
TEST(DeviceThread, LockstepRunsTheDeviceOnlyInStep) {
  FifoRig rig;
  ASSERT_TRUE(rig.ready());
  DeviceThread thread;
  thread.set_lockstep(true);
  thread.add_device(&rig.d.dev());
  ASSERT_TRUE(thread.add_fifo(&rig.d.dev(), rig.fifo));
  EXPECT_EQ(thread.step(), 0u);  // nothing pending
  for (uint32_t i = 1; i <= 3; ++i) {
    rig.post_and_ring();
    EXPECT_EQ(rig.consumed(), i - 1u) << "a WQE was consumed without a step";
    EXPECT_GT(thread.step(), 0u);
    EXPECT_EQ(rig.consumed(), i);
  }
  // A doorbell right before a destroy call: settle() hands it over without a thread.
  rig.post_and_ring();
  EXPECT_TRUE(thread.settle());
  EXPECT_EQ(rig.d.dev().destroy_qp(rig.tx.qp), 0);
  thread.remove_fifo(rig.fifo);
  thread.stop();
  EXPECT_EQ(rig.d.dev().bad_doorbells(), 0u);
}

}  // namespace
}  // namespace mana::emu::test
