// The verbs layer's device thread without the preloaded library (so that ThreadSanitizer can run
// it: suite tsan): a producer thread posts TX WQEs and pushes their doorbells into a trap FIFO, as
// the SIGSEGV handler does; the device thread drains the FIFO into Device::ring and polls the
// device; a control thread settles the FIFOs meanwhile. Every WQE is consumed, and a doorbell
// pushed just before a destroy reaches its queue (no bad doorbell).
#include "verbs/device_thread.h"

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

TEST(DeviceThread, DrainsTrapFifosWhileProducersPushAndSettles) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  const size_t bytes = doorbell::DoorbellFifo::bytes(64);
  void* mem = std::aligned_alloc(64, (bytes + 63) & ~size_t{63});
  doorbell::DoorbellFifo* fifo = doorbell::DoorbellFifo::init(mem, 64);
  ASSERT_NE(fifo, nullptr);
  verbs::DeviceThread thread;
  thread.add_device(&d.dev());
  ASSERT_TRUE(thread.add_fifo(&d.dev(), fifo));

  const std::vector<uint8_t> frame = build_non_ip(port_mac(0), port_mac(0), 0x88b5, 60);
  TxOptions quiet;
  quiet.suppress = true;  // no CQEs: nobody consumes the CQ here
  auto consumed = [&] { return d.dev().sq_counters(tx.binding.sq_id).wqes; };
  std::atomic<bool> producing{true};
  std::thread settler([&] {
    while (producing.load()) thread.settle();
  });
  bool stalled = false;
  for (uint32_t i = 0; i < kFrames && !stalled; ++i) {
    stalled = !wait_until([&] { return i - consumed() < kInFlight; });
    tx.post_frame(frame, quiet);
    fifo->push({d.ctx, hw::kSqDoorbellOffset,
                hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * hw::kBasicUnit)});
  }
  EXPECT_FALSE(stalled) << "the device thread stopped consuming WQEs";
  EXPECT_TRUE(wait_until([&] { return consumed() == kFrames; }))
      << "waited 20 s for " << kFrames << " WQEs consumed, got " << consumed();
  producing = false;
  settler.join();

  // The last doorbell rung right before the destroy call: settle() hands it over first.
  tx.post_frame(frame, quiet);
  fifo->push({d.ctx, hw::kSqDoorbellOffset,
              hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * hw::kBasicUnit)});
  EXPECT_TRUE(thread.settle());
  EXPECT_EQ(d.dev().destroy_qp(tx.qp), 0);
  thread.remove_fifo(fifo);
  thread.stop();
  std::printf("%u WQEs through the trap FIFO and the device thread\n", kFrames);
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
  std::free(mem);
}

// Lockstep mode (doc/emulator.md "Lockstep"): no thread; a WQE whose doorbell sits in the trap
// FIFO is consumed by the step() call that follows, and by nothing else.
TEST(DeviceThread, LockstepRunsTheDeviceOnlyInStep) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  const size_t bytes = doorbell::DoorbellFifo::bytes(64);
  void* mem = std::aligned_alloc(64, (bytes + 63) & ~size_t{63});
  doorbell::DoorbellFifo* fifo = doorbell::DoorbellFifo::init(mem, 64);
  ASSERT_NE(fifo, nullptr);
  verbs::DeviceThread thread;
  thread.set_lockstep(true);
  thread.add_device(&d.dev());
  ASSERT_TRUE(thread.add_fifo(&d.dev(), fifo));
  EXPECT_EQ(thread.step(), 0u);  // nothing pending

  const std::vector<uint8_t> frame = build_non_ip(port_mac(0), port_mac(0), 0x88b5, 60);
  TxOptions quiet;
  quiet.suppress = true;
  auto consumed = [&] { return d.dev().sq_counters(tx.binding.sq_id).wqes; };
  for (uint32_t i = 1; i <= 3; ++i) {
    tx.post_frame(frame, quiet);
    fifo->push({d.ctx, hw::kSqDoorbellOffset,
                hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * hw::kBasicUnit)});
    EXPECT_EQ(consumed(), i - 1u) << "a WQE was consumed without a step";
    EXPECT_GT(thread.step(), 0u);
    EXPECT_EQ(consumed(), i);
  }
  // A doorbell right before a destroy call: settle() hands it over without a thread.
  tx.post_frame(frame, quiet);
  fifo->push({d.ctx, hw::kSqDoorbellOffset,
              hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * hw::kBasicUnit)});
  EXPECT_TRUE(thread.settle());
  EXPECT_EQ(d.dev().destroy_qp(tx.qp), 0);
  thread.remove_fifo(fifo);
  thread.stop();
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
  std::free(mem);
}

}  // namespace
}  // namespace mana::emu::test
