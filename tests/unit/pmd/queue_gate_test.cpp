// SPDX-License-Identifier: BSD-3-Clause
// The queue gate under real concurrency: once gate_close returns true, no burst is inside and none
// enters, so the control path may release what bursts touch.
#include "queue_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace mana {
namespace {

TEST(QueueGate, ClosedAtSetupOpenAfterOpen) {
  QueueGate g{};
  const uint32_t process_open = 1;
  EXPECT_FALSE(gate_enter(g, process_open));
  EXPECT_EQ(g.busy, 0u);
  gate_open(g);
  ASSERT_TRUE(gate_enter(g, process_open));
  EXPECT_EQ(g.busy, 1u);
  gate_leave(g);
  EXPECT_FALSE(gate_enter(g, 0));  // the process has detached
  EXPECT_EQ(g.busy, 0u);
}

// A burst that never leaves (a process that died inside it): close gives up after its timeout.
TEST(QueueGate, CloseTimesOutOnABurstThatNeverLeaves) {
  QueueGate g{};
  gate_open(g);
  const uint32_t process_open = 1;
  ASSERT_TRUE(gate_enter(g, process_open));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(gate_close(g, 50));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50));
  gate_leave(g);
  EXPECT_TRUE(gate_close(g, 50));
}

// A "burst" thread reads a resource throughout each pass inside the gate; the control thread
// closes the gate, poisons the resource, lets the burst thread make two more attempts (so a burst
// that was wrongly inside reads the poison), restores and reopens, many times.
template <typename Close>
void race_burst_against_close(Close close_gate, uint32_t& process_open, QueueGate& g) {
  constexpr int kCycles = 500;
  std::atomic<int> resource{1};
  std::atomic<bool> done{false};
  std::atomic<uint64_t> attempts{0}, entered{0}, poisoned_reads{0};
  std::thread burst([&] {
    while (!done.load()) {
      if (gate_enter(g, process_open)) {
        bool poisoned = false;  // a long pass: a wrongly open gate is caught in the act
        for (int k = 0; k < 256; k++) poisoned |= resource.load() != 1;
        if (poisoned) poisoned_reads++;
        entered++;
        gate_leave(g);
      }
      attempts++;
    }
  });
  for (int i = 0; i < kCycles; i++) {
    ASSERT_TRUE(close_gate()) << "cycle " << i;
    resource.store(0);  // "released"
    const uint64_t a0 = attempts.load();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (attempts.load() < a0 + 2) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "the burst thread made no progress for 10 s (cycle " << i << ")";
      std::this_thread::yield();
    }
    resource.store(1);
    const uint64_t e0 = entered.load();
    gate_open(g);
    std::atomic_ref<uint32_t>(process_open).store(1);
    // The next close must race a burst that really runs: wait until one got in (on a loaded
    // machine the burst thread may otherwise see the gate only while it is closed).
    const auto entry_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (entered.load() == e0) {
      ASSERT_LT(std::chrono::steady_clock::now(), entry_deadline)
          << "no burst entered the reopened gate for 10 s (cycle " << i << ")";
      std::this_thread::yield();
    }
  }
  done = true;
  burst.join();
  EXPECT_EQ(poisoned_reads.load(), 0u);
  EXPECT_GE(entered.load(), static_cast<uint64_t>(kCycles));
}

TEST(QueueGate, NoBurstInsideOnceClosed) {
  QueueGate g{};
  uint32_t process_open = 1;
  race_burst_against_close([&] { return gate_close(g, 5000); }, process_open, g);
}

TEST(QueueGate, NoBurstOfTheProcessInsideOnceItsFlagIsClosed) {
  QueueGate g{};
  uint32_t process_open = 1;
  QueueGate* gates[] = {&g};
  race_burst_against_close([&] { return gates_close_for_process(process_open, gates, 1, 5000); },
                           process_open, g);
}

}  // namespace
}  // namespace mana
