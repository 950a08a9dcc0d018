// SPDX-License-Identifier: BSD-3-Clause
// A bounded lock-free multi-producer queue of doorbell stores (`Device::ring` from any thread),
// drained by the device thread. Each cell carries a sequence number so that producers claim cells
// with one CAS and the consumer sees a cell only once its producer has finished writing it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace mana::emu {

struct DoorbellStore {
  uint32_t context_id;
  uint32_t offset;
  uint64_t value;
};

class DoorbellQueue {
 public:
  explicit DoorbellQueue(uint32_t log2_capacity)
      : mask_((1u << log2_capacity) - 1), cells_(new Cell[mask_ + 1]) {
    for (uint32_t i = 0; i <= mask_; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  // False when full (the caller drains and retries).
  bool push(const DoorbellStore& store) {
    uint32_t pos = enqueue_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      const uint32_t seq = cell.seq.load(std::memory_order_acquire);
      const int32_t diff = static_cast<int32_t>(seq - pos);
      if (diff == 0) {
        if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.store = store;
          cell.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = enqueue_.load(std::memory_order_relaxed);
      }
    }
  }

  // Single consumer.
  bool pop(DoorbellStore* out) {
    Cell& cell = cells_[dequeue_ & mask_];
    if (cell.seq.load(std::memory_order_acquire) != dequeue_ + 1) return false;
    *out = cell.store;
    cell.seq.store(dequeue_ + mask_ + 1, std::memory_order_release);
    ++dequeue_;
    return true;
  }

 private:
  struct Cell {
    std::atomic<uint32_t> seq;
    DoorbellStore store;
  };
  const uint32_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<uint32_t> enqueue_{0};
  alignas(64) uint32_t dequeue_ = 0;
};

}  // namespace mana::emu
