// SPDX-License-Identifier: BSD-3-Clause
// Exactness under load: producer threads in two processes (the second forked, mapping the shared
// memfd itself like a DPDK secondary) store distinct values into one trapped doorbell page while a
// consumer thread pops. Every value must arrive exactly once, and each producer's in order.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "doorbell/trap.h"
#include "doorbell_memory.h"

namespace mana::emu::doorbell::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kContext = 3;
constexpr uint32_t kProcesses = 2;
constexpr uint32_t kThreadsPerProcess = 4;
constexpr uint32_t kProducers = kProcesses * kThreadsPerProcess;
// One signal per store (a few µs): 8 x 60000 stores take 0.6 s on an idle 2-core machine and
// 2.3 s next to four busy loops; under ASan+UBSan (debug) 0.9 s and 2.6 s. The deadline is 15
// times that; meson's timeout (meson.build) is twice it, so an overdue run fails with this test's
// message.
constexpr uint32_t kStoresPerProducer = 60000;
constexpr auto kTimeout = std::chrono::seconds(40);

// Producers alternate between the SQ, RQ and CQ doorbells and the 32-bit short SQ doorbell.
constexpr uint32_t kOffsets[4] = {0x000, 0x400, 0x800, 0x010};
uint32_t OffsetOf(uint32_t producer) { return kOffsets[producer % 4]; }
bool IsShort(uint32_t offset) { return offset == 0x010; }

// The value producer `p` stores `sequence`-th: its id in the top byte of the stored width.
uint64_t ValueOf(uint32_t producer, uint32_t sequence) {
  return IsShort(OffsetOf(producer)) ? (uint64_t{producer} << 24) | sequence
                                     : (uint64_t{producer} << 56) | sequence;
}

void Produce(volatile uint64_t* page, uint32_t producer) {
  const uint32_t offset = OffsetOf(producer);
  auto* slot = reinterpret_cast<volatile char*>(page) + offset;
  for (uint32_t i = 0; i < kStoresPerProducer; ++i) {
    if (IsShort(offset)) {
      *reinterpret_cast<volatile uint32_t*>(slot) = static_cast<uint32_t>(ValueOf(producer, i));
    } else {
      *reinterpret_cast<volatile uint64_t*>(slot) = ValueOf(producer, i);
    }
  }
}

void RunProducers(volatile uint64_t* page, uint32_t process) {
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreadsPerProcess; ++t) {
    threads.emplace_back(Produce, page, process * kThreadsPerProcess + t);
  }
  for (auto& t : threads) t.join();
}

// The secondary: its own mapping of the page and the FIFO, its own registration.
[[noreturn]] void SecondaryProcess(const DoorbellMemory& memory) {
  DoorbellMemory::View view = memory.map(false);
  if (view.fifo == nullptr) _exit(2);
  if (trap_register(const_cast<uint64_t*>(view.trapped), kContext, view.fifo) != 0) _exit(3);
  RunProducers(view.trapped, 1);
  _exit(0);
}

struct ConsumerResult {
  uint64_t received = 0;
  std::string error;  // first record out of place
};

ConsumerResult Consume(DoorbellFifo* fifo, Clock::time_point deadline) {
  ConsumerResult result;
  std::vector<uint32_t> next(kProducers, 0);
  const uint64_t expected = uint64_t{kProducers} * kStoresPerProducer;
  DoorbellRecord r;
  while (result.received < expected && Clock::now() < deadline) {
    if (!fifo->pop(r)) {
      std::this_thread::yield();
      continue;
    }
    const bool is_short = IsShort(r.offset);
    const auto producer = static_cast<uint32_t>(is_short ? r.value >> 24 : r.value >> 56);
    const bool in_place = r.context_id == kContext && producer < kProducers &&
                          r.offset == OffsetOf(producer) && next[producer] < kStoresPerProducer &&
                          r.value == ValueOf(producer, next[producer]);
    if (!in_place) {
      result.error = "record {context " + std::to_string(r.context_id) + ", offset " +
                     std::to_string(r.offset) + ", value " + std::to_string(r.value) +
                     "} out of place";
      return result;
    }
    ++next[producer];
    ++result.received;
  }
  return result;
}

// waitpid with a deadline; kills the child when it is overdue.
int WaitForChild(pid_t child, Clock::time_point deadline) {
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return status;
    if (done < 0 || Clock::now() >= deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a condition, bounded
  }
}

TEST(TrapStress, EightProducersInTwoProcessesEveryStoreExactlyOnceInOrder) {
  DoorbellMemory memory(1024);  // small next to the load: producers also wait for room
  DoorbellMemory::View view = memory.map(true);
  ASSERT_NE(view.fifo, nullptr);
  ASSERT_EQ(trap_register(const_cast<uint64_t*>(view.trapped), kContext, view.fifo), 0);

  // Fork before this process has any thread.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) SecondaryProcess(memory);

  const auto start = Clock::now();
  const auto deadline = start + kTimeout;
  ConsumerResult result;
  std::thread consumer([&] { result = Consume(view.fifo, deadline); });
  RunProducers(view.trapped, 0);
  const int status = WaitForChild(child, deadline);
  consumer.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "secondary status " << status;
  EXPECT_EQ(result.error, "");
  EXPECT_EQ(result.received, uint64_t{kProducers} * kStoresPerProducer);
  DoorbellRecord extra;
  EXPECT_FALSE(view.fifo->pop(extra)) << "more records than stores";
  for (unsigned i = 0; i < kTrapPageSize / 8; ++i)
    ASSERT_EQ(view.trapped[i], 0u) << "a store landed";
  EXPECT_EQ(trap_unregister(const_cast<uint64_t*>(view.trapped)), 0);
  memory.unmap(view);
  RecordProperty("stores_per_second",
                 std::to_string(static_cast<uint64_t>(result.received / seconds)));
  std::printf("%llu trapped stores in %.2f s\n", static_cast<unsigned long long>(result.received),
              seconds);
}

}  // namespace
}  // namespace mana::emu::doorbell::testing
