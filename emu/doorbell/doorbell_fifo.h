// SPDX-License-Identifier: BSD-3-Clause
// Multi-producer single-consumer FIFO of doorbell records in caller-provided (shared) memory.
//
// Producers are the trap's SIGSEGV handler in any thread of any process that maps the memory;
// the consumer is the device thread. A bounded ring of sequence-numbered cells (Vyukov's bounded
// MPMC queue with a single consumer): push uses atomics only, so it is lock-free and
// async-signal-safe, and it never drops: when the ring is full it spins (pause, then sched_yield)
// until the consumer makes room. Only address-free lock-free atomics live in the memory, so every
// process can map it at any address.
//
// A push claims its cell, then publishes it. A producer preempted in between must not hide the
// records pushed after it by other threads: a store to MMIO is done in one instruction, and the
// device must see later stores of other CPUs (doc/hardware.md §4.8, "Order across queues"). So pop
// takes the oldest published record, past cells still being written; one thread's records still
// come out in its order, as it publishes each before it claims the next.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace mana::emu::doorbell {

struct DoorbellRecord {
  uint32_t context_id;
  uint32_t offset;  // byte offset of the store in the doorbell page
  uint64_t value;   // the stored value, zero-extended (a 32-bit short doorbell keeps 32 bits)
};

class DoorbellFifo {
 public:
  // Bytes of memory `init` needs for `capacity` records; capacity must be a power of two >= 2.
  static size_t bytes(uint32_t capacity);
  // Formats `mem` (aligned to 64 bytes, `bytes(capacity)` long) as an empty FIFO; nullptr when
  // `mem` is misaligned or capacity is not a power of two >= 2.
  static DoorbellFifo* init(void* mem, uint32_t capacity);
  // A FIFO another process (or this one) formatted in `mem`; nullptr if `mem` holds none.
  static DoorbellFifo* attach(void* mem);

  // Any thread, any process, signal handlers included: claim() then publish().
  void push(const DoorbellRecord& record) noexcept { publish(claim(), record); }
  // The two steps of push, apart only so that a test can stand for a producer preempted between
  // them. claim() waits for room and returns the claimed position.
  uint64_t claim() noexcept;
  void publish(uint64_t position, const DoorbellRecord& record) noexcept;
  // Single consumer only: the oldest published record not yet taken. False when there is none
  // (the ring is empty, or every claimed cell is still being written).
  bool pop(DoorbellRecord& record) noexcept;

  uint32_t capacity() const { return mask_ + 1; }
  // Cells claimed and not yet free again: records not yet popped, and those popped ahead of one
  // still being written (a snapshot; exact when producers are idle).
  uint64_t size() const;

  DoorbellFifo(const DoorbellFifo&) = delete;
  DoorbellFifo& operator=(const DoorbellFifo&) = delete;

 private:
  struct alignas(32) Cell {
    std::atomic<uint64_t> sequence;  // == position: free for the producer of `position`;
                                     // == position + 1: holds the record of `position`
    DoorbellRecord record;
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free,
                "shared memory needs address-free atomics");

  // A cell the consumer took ahead of an unpublished one: its sequence gets this bit until the
  // dequeue position reaches it. A producer waiting for the cell reads it as "not yet free".
  static constexpr uint64_t kTakenAhead = uint64_t{1} << 63;

  DoorbellFifo(uint32_t capacity);
  Cell* cells() { return reinterpret_cast<Cell*>(this + 1); }
  // Frees the cell at `position` and the run of cells taken ahead after it; advances the dequeue
  // position past them.
  void release_from(uint64_t position) noexcept;

  uint64_t magic_;
  uint32_t mask_;
  alignas(64) std::atomic<uint64_t> enqueue_position_;
  alignas(64) std::atomic<uint64_t> dequeue_position_;
};

}  // namespace mana::emu::doorbell
