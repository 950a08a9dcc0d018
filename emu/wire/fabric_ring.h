// SPDX-License-Identifier: BSD-3-Clause
// Bounded multi-producer single-consumer ring of whole frames in shared memory: a fabric port's
// receive queue, into which the device threads of any number of processes send at once.
//
// Producers claim a position with a compare-and-swap on `claimed`, copy the frame into its slot
// and publish it with a release store of the slot's `turn`; the consumer (the owning port's
// device thread) takes slots in position order. No locks, no syscalls. `turn` encodes the slot's
// state relative to the lap base of a position p (p & ~mask): equal = free for p, base + 1 =
// holds p's frame, base + capacity = free for p + capacity. Zeroed memory is an empty ring. A
// producer that dies between its claim and its publish stalls the ring (its owner re-creates it
// when the port is attached again).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "wire/frame_ring.h"

namespace mana::emu {

struct FabricSlot {
  std::atomic<uint32_t> turn;
  uint32_t len;
  uint8_t reserved[56];  // keeps the data cache-line aligned
  uint8_t data[kWireMaxFrameLen];
};
static_assert(sizeof(FabricSlot) % 64 == 0);

struct FabricRingIndices {
  alignas(64) std::atomic<uint32_t> claimed;   // next position a producer takes
  alignas(64) std::atomic<uint32_t> consumed;  // next position the consumer reads (informative)
};

class FabricRing {
 public:
  static constexpr size_t bytes_for(uint32_t capacity) {
    return sizeof(FabricRingIndices) + size_t{capacity} * sizeof(FabricSlot);
  }

  void attach(void* memory, uint32_t capacity) {
    indices_ = static_cast<FabricRingIndices*>(memory);
    slots_ =
        reinterpret_cast<FabricSlot*>(static_cast<uint8_t*>(memory) + sizeof(FabricRingIndices));
    mask_ = capacity - 1;
    next_ = indices_->consumed.load(std::memory_order_acquire);
  }

  // Any producer: copies the frame with its first 12 bytes (destination and source MAC) replaced
  // by `macs`. False when the ring is full or the frame is not 12..kWireMaxFrameLen bytes.
  bool push(const uint8_t* frame, uint32_t len, const uint8_t* macs) {
    if (len < 12 || len > kWireMaxFrameLen) return false;
    uint32_t pos = indices_->claimed.load(std::memory_order_relaxed);
    FabricSlot* slot;
    for (;;) {
      slot = &slots_[pos & mask_];
      const uint32_t turn = slot->turn.load(std::memory_order_acquire);
      const auto ahead = static_cast<int32_t>(turn - (pos & ~mask_));
      if (ahead == 0) {
        if (indices_->claimed.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (ahead < 0) {
        return false;  // the slot still holds a frame of the previous lap: full
      } else {
        pos = indices_->claimed.load(std::memory_order_relaxed);  // another producer took it
      }
    }
    slot->len = len;
    std::memcpy(slot->data, macs, 12);
    std::memcpy(slot->data + 12, frame + 12, len - 12);
    slot->turn.store((pos & ~mask_) + 1, std::memory_order_release);
    return true;
  }

  // Consumer: length of the oldest published frame, 0 when none.
  uint32_t peek() const {
    const FabricSlot& slot = slots_[next_ & mask_];
    if (slot.turn.load(std::memory_order_acquire) != (next_ & ~mask_) + 1) return 0;
    return slot.len;
  }

  // Consumer: as FrameRing::pop.
  uint32_t pop(uint8_t* buf, uint32_t cap, uint32_t* full_len) {
    const uint32_t len = peek();
    if (full_len) *full_len = len;
    if (len == 0) return 0;
    FabricSlot& slot = slots_[next_ & mask_];
    const uint32_t copied = len < cap ? len : cap;
    std::memcpy(buf, slot.data, copied);
    slot.turn.store((next_ & ~mask_) + mask_ + 1, std::memory_order_release);
    ++next_;
    indices_->consumed.store(next_, std::memory_order_relaxed);
    return copied;
  }

 private:
  FabricRingIndices* indices_ = nullptr;
  FabricSlot* slots_ = nullptr;
  uint32_t mask_ = 0;
  uint32_t next_ = 0;  // consumer's position
};

}  // namespace mana::emu
