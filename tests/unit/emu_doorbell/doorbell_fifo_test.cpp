// SPDX-License-Identifier: BSD-3-Clause
#include "doorbell/doorbell_fifo.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace mana::emu::doorbell {
namespace {

using Clock = std::chrono::steady_clock;
// Well below meson's 30 s timeout, so that an overdue run fails with this test's message and not
// with meson's kill; a run here takes under a second.
constexpr auto kTimeout = std::chrono::seconds(10);
constexpr double kTimeoutS = std::chrono::duration<double>(kTimeout).count();
// After the consumer gives up: how long producers get to return while it drains the ring.
constexpr auto kDrainTimeout = std::chrono::seconds(5);

// Producer threads that a consumer can give up on: `finish` tells them to stop and pops (and
// counts) records until every one has returned, so a producer waiting in push() for room is let
// go and the test fails with its message instead of hanging. A producer that still has not returned
// (a push that never completes) ends the process with a message.
class Producers {
 public:
  // `body(give_up)` pushes, checking `give_up` between pushes.
  void start(std::function<void(const std::atomic<bool>&)> body) {
    threads_.emplace_back([this, body] {
      body(give_up_);
      returned_.fetch_add(1);
    });
  }
  // Returns the records popped while draining: 0 when the consumer took every record.
  uint64_t finish(DoorbellFifo* fifo) {
    give_up_.store(true);
    uint64_t drained = 0;
    const auto deadline = Clock::now() + kDrainTimeout;
    DoorbellRecord r;
    while (returned_.load() < threads_.size()) {
      if (fifo->pop(r)) {
        ++drained;
      } else if (Clock::now() > deadline) {
        std::fprintf(stderr,
                     "%zu of %zu producers still in push() %lld s after the consumer gave up\n",
                     threads_.size() - returned_.load(), threads_.size(),
                     static_cast<long long>(kDrainTimeout.count()));
        std::_Exit(1);
      } else {
        std::this_thread::yield();
      }
    }
    for (auto& t : threads_) t.join();
    threads_.clear();
    return drained;
  }
  ~Producers() {
    if (!threads_.empty()) {  // a test that forgot finish(): fail loudly rather than hang
      std::fprintf(stderr, "producer threads not finished\n");
      std::_Exit(1);
    }
  }

 private:
  std::vector<std::thread> threads_;
  std::atomic<bool> give_up_{false};
  std::atomic<size_t> returned_{0};
};

// Shared anonymous memory: visible to a forked child, like the memfd of the real setup.
class SharedMemory {
 public:
  explicit SharedMemory(size_t bytes) : bytes_(bytes) {
    mem_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem_ == MAP_FAILED) mem_ = nullptr;
  }
  ~SharedMemory() {
    if (mem_ != nullptr) munmap(mem_, bytes_);
  }
  void* get() const { return mem_; }

 private:
  size_t bytes_;
  void* mem_;
};

DoorbellRecord Record(uint32_t producer, uint64_t sequence) {
  return {producer, static_cast<uint32_t>(sequence & 0xFFF), (uint64_t{producer} << 40) | sequence};
}

TEST(DoorbellFifo, InitRejectsBadCapacityAndAlignment) {
  SharedMemory mem(DoorbellFifo::bytes(64) + 64);
  ASSERT_NE(mem.get(), nullptr);
  EXPECT_EQ(DoorbellFifo::init(mem.get(), 0), nullptr);
  EXPECT_EQ(DoorbellFifo::init(mem.get(), 1), nullptr);
  EXPECT_EQ(DoorbellFifo::init(mem.get(), 48), nullptr);
  EXPECT_EQ(DoorbellFifo::init(static_cast<char*>(mem.get()) + 8, 64), nullptr);
  EXPECT_NE(DoorbellFifo::init(mem.get(), 64), nullptr);
}

TEST(DoorbellFifo, AttachFindsOnlyAFormattedFifo) {
  SharedMemory mem(DoorbellFifo::bytes(8));
  ASSERT_NE(mem.get(), nullptr);
  EXPECT_EQ(DoorbellFifo::attach(mem.get()), nullptr);  // zero-filled
  DoorbellFifo* fifo = DoorbellFifo::init(mem.get(), 8);
  ASSERT_NE(fifo, nullptr);
  EXPECT_EQ(DoorbellFifo::attach(mem.get()), fifo);
  EXPECT_EQ(fifo->capacity(), 8u);
}

TEST(DoorbellFifo, PopsInPushOrderAcrossManyWraps) {
  SharedMemory mem(DoorbellFifo::bytes(4));
  DoorbellFifo* fifo = DoorbellFifo::init(mem.get(), 4);
  ASSERT_NE(fifo, nullptr);
  DoorbellRecord r;
  EXPECT_FALSE(fifo->pop(r));
  uint64_t pushed = 0, popped = 0;
  for (int round = 0; round < 100; ++round) {
    const int batch = 1 + round % 4;  // 1..capacity at a time
    for (int i = 0; i < batch; ++i) fifo->push(Record(7, pushed++));
    EXPECT_EQ(fifo->size(), static_cast<uint64_t>(batch));
    for (int i = 0; i < batch; ++i) {
      ASSERT_TRUE(fifo->pop(r));
      const DoorbellRecord want = Record(7, popped++);
      EXPECT_EQ(r.context_id, want.context_id);
      EXPECT_EQ(r.offset, want.offset);
      EXPECT_EQ(r.value, want.value);
    }
    EXPECT_FALSE(fifo->pop(r));
  }
}

// A producer preempted between claiming its cell and publishing it (a trapped store not yet
// done) must not hide the records other threads pushed after it: the device would see their
// doorbells without the older ones they followed (doc/hardware.md §4.8). Its own record comes out
// once published, and the cells taken ahead of it are reused only after that.
TEST(DoorbellFifo, ARecordStillBeingWrittenHidesNoneOfTheLaterOnes) {
  SharedMemory mem(DoorbellFifo::bytes(4));
  DoorbellFifo* fifo = DoorbellFifo::init(mem.get(), 4);
  ASSERT_NE(fifo, nullptr);
  DoorbellRecord r;
  const uint64_t stalled = fifo->claim();                     // producer 1, preempted
  for (uint64_t i = 0; i < 3; ++i) fifo->push(Record(2, i));  // producer 2 fills the ring
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(fifo->pop(r)) << "record " << i << " of producer 2 hidden";
    EXPECT_EQ(r.value, Record(2, i).value);
  }
  EXPECT_FALSE(fifo->pop(r));
  EXPECT_EQ(fifo->size(), 4u);  // no cell is free until producer 1's is taken
  fifo->publish(stalled, Record(1, 0));
  ASSERT_TRUE(fifo->pop(r));
  EXPECT_EQ(r.value, Record(1, 0).value);
  EXPECT_FALSE(fifo->pop(r));
  EXPECT_EQ(fifo->size(), 0u);
  // Every cell is free again: a whole ring, in order, twice.
  uint64_t pushed = 0, popped = 0;
  for (int lap = 0; lap < 2; ++lap) {
    for (int i = 0; i < 4; ++i) fifo->push(Record(3, pushed++));
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(fifo->pop(r));
      EXPECT_EQ(r.value, Record(3, popped++).value);
    }
  }
  // Two stalled producers with published records between and after them.
  const uint64_t a = fifo->claim();
  fifo->push(Record(4, 0));
  const uint64_t b = fifo->claim();
  fifo->push(Record(4, 1));
  ASSERT_TRUE(fifo->pop(r));
  EXPECT_EQ(r.value, Record(4, 0).value);
  ASSERT_TRUE(fifo->pop(r));
  EXPECT_EQ(r.value, Record(4, 1).value);
  EXPECT_FALSE(fifo->pop(r));
  fifo->publish(b, Record(5, 0));
  ASSERT_TRUE(fifo->pop(r));
  EXPECT_EQ(r.value, Record(5, 0).value);
  EXPECT_EQ(fifo->size(), 4u);  // a's cell still holds the ring's head
  fifo->publish(a, Record(6, 0));
  ASSERT_TRUE(fifo->pop(r));
  EXPECT_EQ(r.value, Record(6, 0).value);
  EXPECT_FALSE(fifo->pop(r));
  EXPECT_EQ(fifo->size(), 0u);
}

TEST(DoorbellFifo, PushWaitsWhenFullInsteadOfDropping) {
  constexpr uint32_t kCapacity = 8;
  SharedMemory mem(DoorbellFifo::bytes(kCapacity));
  DoorbellFifo* fifo = DoorbellFifo::init(mem.get(), kCapacity);
  ASSERT_NE(fifo, nullptr);
  std::atomic<uint32_t> pushed{0};
  Producers producer;
  producer.start([&](const std::atomic<bool>& give_up) {
    for (uint32_t i = 0; i < kCapacity + 3 && !give_up.load(); ++i) {
      fifo->push(Record(1, i));
      pushed.store(i + 1);
    }
  });
  // Wait until the ring is full; the producer's next pushes must wait for room, not overwrite.
  const auto deadline = Clock::now() + kTimeout;
  while (pushed.load() < kCapacity && Clock::now() < deadline) std::this_thread::yield();
  const uint32_t when_full = pushed.load();
  uint32_t popped = 0;
  bool in_order = true;
  DoorbellRecord r{};
  while (in_order && popped < kCapacity + 3 && Clock::now() < deadline) {
    if (!fifo->pop(r)) {
      std::this_thread::yield();
      continue;
    }
    in_order = r.value == Record(1, popped).value;
    if (in_order) ++popped;
  }
  const uint64_t drained = producer.finish(fifo);
  EXPECT_EQ(when_full, kCapacity) << "pushes into a full ring of " << kCapacity;
  EXPECT_TRUE(in_order) << "record " << popped << " is " << r.value;
  EXPECT_EQ(popped, kCapacity + 3) << "records popped within " << kTimeoutS << " s";
  EXPECT_EQ(drained, 0u);
  EXPECT_EQ(pushed.load(), kCapacity + 3);
}

// Checks a stream of records from several producers: each producer's sequence arrives exactly once
// and in order. Producer p pushes Record(p, 0..count-1).
class OrderChecker {
 public:
  OrderChecker(uint32_t producers, uint64_t count) : next_(producers, 0), count_(count) {}
  // Returns false (and remembers why) on the first record out of place.
  bool accept(const DoorbellRecord& r) {
    const uint32_t producer = r.context_id;
    if (producer >= next_.size() || next_[producer] >= count_ ||
        r.value != Record(producer, next_[producer]).value ||
        r.offset != (next_[producer] & 0xFFF)) {
      return false;
    }
    ++next_[producer];
    ++total_;
    return true;
  }
  uint64_t total() const { return total_; }

 private:
  std::vector<uint64_t> next_;
  uint64_t count_;
  uint64_t total_ = 0;
};

TEST(DoorbellFifo, ManyThreadsIntoASmallRingArriveExactlyOnceInOrder) {
  constexpr uint32_t kProducers = 4;
  constexpr uint64_t kPerProducer = 25000;
  SharedMemory mem(DoorbellFifo::bytes(64));
  DoorbellFifo* fifo = DoorbellFifo::init(mem.get(), 64);
  ASSERT_NE(fifo, nullptr);
  Producers producers;
  for (uint32_t p = 0; p < kProducers; ++p) {
    producers.start([fifo, p](const std::atomic<bool>& give_up) {
      for (uint64_t i = 0; i < kPerProducer && !give_up.load(std::memory_order_relaxed); ++i)
        fifo->push(Record(p, i));
    });
  }
  OrderChecker checker(kProducers, kPerProducer);
  const auto deadline = Clock::now() + kTimeout;
  DoorbellRecord r;
  bool in_order = true;
  while (in_order && checker.total() < kProducers * kPerProducer && Clock::now() < deadline) {
    if (fifo->pop(r)) {
      in_order = checker.accept(r);
    } else {
      std::this_thread::yield();  // let the producers run on a busy 2-core machine
    }
  }
  const uint64_t drained = producers.finish(fifo);
  EXPECT_TRUE(in_order) << "out of place: producer " << r.context_id << " value " << r.value;
  EXPECT_EQ(checker.total(), kProducers * kPerProducer)
      << "records in order within " << kTimeoutS << " s";
  EXPECT_EQ(drained, 0u) << "records left after the last expected one";
}

TEST(DoorbellFifo, AnotherProcessPushesThroughAttach) {
  constexpr uint64_t kCount = 50000;
  SharedMemory mem(DoorbellFifo::bytes(32));
  DoorbellFifo* fifo = DoorbellFifo::init(mem.get(), 32);
  ASSERT_NE(fifo, nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DoorbellFifo* attached = DoorbellFifo::attach(mem.get());
    if (attached == nullptr) _exit(2);
    for (uint64_t i = 0; i < kCount; ++i) attached->push(Record(0, i));
    _exit(0);
  }
  OrderChecker checker(1, kCount);
  const auto deadline = Clock::now() + kTimeout;
  DoorbellRecord r;
  bool in_order = true;
  while (in_order && checker.total() < kCount && Clock::now() < deadline) {
    if (fifo->pop(r)) {
      in_order = checker.accept(r);
    } else {
      std::this_thread::yield();  // let the producers run on a busy 2-core machine
    }
  }
  // A consumer that gave up lets the child go: it may be waiting in push() for room.
  const bool gave_up = checker.total() < kCount;
  if (gave_up) kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(gave_up) << "the consumer gave up after " << kTimeoutS << " s";
  if (!gave_up) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  EXPECT_TRUE(in_order);
  EXPECT_EQ(checker.total(), kCount);
}

}  // namespace
}  // namespace mana::emu::doorbell
