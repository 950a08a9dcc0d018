// SPDX-License-Identifier: BSD-3-Clause
#include "doorbell/doorbell_fifo.h"

#include <sched.h>

#include <new>

namespace mana::emu::doorbell {
namespace {

constexpr uint64_t kMagic = 0x4d414e4144424649ull;  // "MANADBFI"

bool power_of_two_at_least_2(uint32_t n) { return n >= 2 && (n & (n - 1)) == 0; }

// Full ring (the exceptional path): spin briefly, then give the CPU away so that a consumer
// sharing the core can run. sched_yield is async-signal-safe.
void wait_for_room(uint32_t spins) {
  constexpr uint32_t kSpinsBeforeYield = 256;
  if (spins < kSpinsBeforeYield) {
    // The spin-wait hint (x86 pause, AArch64 yield).
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
  } else {
    sched_yield();
  }
}

}  // namespace

size_t DoorbellFifo::bytes(uint32_t capacity) {
  return sizeof(DoorbellFifo) + size_t{capacity} * sizeof(Cell);
}

DoorbellFifo::DoorbellFifo(uint32_t capacity)
    : magic_(0), mask_(capacity - 1), enqueue_position_(0), dequeue_position_(0) {
  for (uint32_t i = 0; i < capacity; ++i) new (&cells()[i]) Cell{{i}, {}};
}

DoorbellFifo* DoorbellFifo::init(void* mem, uint32_t capacity) {
  if (!power_of_two_at_least_2(capacity) || reinterpret_cast<uintptr_t>(mem) % 64 != 0) {
    return nullptr;
  }
  auto* fifo = new (mem) DoorbellFifo(capacity);
  // Published last, so an attacher never sees a half-formatted FIFO.
  std::atomic_ref<uint64_t>(fifo->magic_).store(kMagic, std::memory_order_release);
  return fifo;
}

DoorbellFifo* DoorbellFifo::attach(void* mem) {
  auto* fifo = static_cast<DoorbellFifo*>(mem);
  if (std::atomic_ref<uint64_t>(fifo->magic_).load(std::memory_order_acquire) != kMagic) {
    return nullptr;
  }
  return fifo;
}

uint64_t DoorbellFifo::claim() noexcept {
  uint64_t position = enqueue_position_.load(std::memory_order_relaxed);
  uint32_t full_spins = 0;
  for (;;) {
    const uint64_t sequence = cells()[position & mask_].sequence.load(std::memory_order_acquire);
    const int64_t lag = static_cast<int64_t>(sequence - position);
    if (lag == 0) {
      if (enqueue_position_.compare_exchange_weak(position, position + 1,
                                                  std::memory_order_relaxed)) {
        return position;
      }
      continue;  // `position` was reloaded by the failed exchange
    }
    // The consumer has not freed this cell yet (taken-ahead cells read as negative lag too).
    if (lag < 0) wait_for_room(full_spins++);
    position = enqueue_position_.load(std::memory_order_relaxed);
  }
}

void DoorbellFifo::publish(uint64_t position, const DoorbellRecord& record) noexcept {
  Cell& cell = cells()[position & mask_];
  cell.record = record;
  cell.sequence.store(position + 1, std::memory_order_release);
}

bool DoorbellFifo::pop(DoorbellRecord& record) noexcept {
  const uint64_t head = dequeue_position_.load(std::memory_order_relaxed);
  const uint64_t end = enqueue_position_.load(std::memory_order_acquire);
  // Cells between head and end are claimed: published (sequence position + 1), being written
  // (sequence == position) or taken ahead. At most one is being written per producer thread.
  for (uint64_t position = head; position != end; ++position) {
    Cell& cell = cells()[position & mask_];
    if (cell.sequence.load(std::memory_order_acquire) != position + 1) continue;
    record = cell.record;
    if (position == head) {
      release_from(position);
    } else {
      cell.sequence.store((position + 1) | kTakenAhead, std::memory_order_relaxed);
    }
    return true;
  }
  return false;
}

void DoorbellFifo::release_from(uint64_t position) noexcept {
  for (;;) {
    cells()[position & mask_].sequence.store(position + mask_ + 1, std::memory_order_release);
    ++position;
    if (position == enqueue_position_.load(std::memory_order_acquire)) break;
    const uint64_t next = cells()[position & mask_].sequence.load(std::memory_order_relaxed);
    if (next != ((position + 1) | kTakenAhead)) break;
  }
  dequeue_position_.store(position, std::memory_order_relaxed);
}

uint64_t DoorbellFifo::size() const {
  const uint64_t tail = dequeue_position_.load(std::memory_order_acquire);
  const uint64_t head = enqueue_position_.load(std::memory_order_acquire);
  return head >= tail ? head - tail : 0;
}

}  // namespace mana::emu::doorbell
