// SPDX-License-Identifier: BSD-3-Clause
// Bounded single-producer single-consumer ring of whole frames, laid out in caller-provided memory
// so that the same code serves in-process wires (loop, pair) and the cross-process shm wire.
//
// The memory holds only the two indices and fixed-size slots: no pointers, so every process can map
// it at any address. The producer publishes a slot with a release store of `produced`; the
// consumer frees it with a release store of `consumed`. Each side keeps a private copy of the
// other side's index and rereads the shared one only when the ring looks full (or empty), so the
// common case of push/pop is a memcpy and one index store.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mana::emu {

// Largest frame a wire carries (jumbo MTU 9000 + Ethernet and VLAN headers, rounded up).
inline constexpr uint32_t kWireMaxFrameLen = 9216;

struct FrameSlot {
  uint32_t len;
  uint8_t reserved[60];  // keeps the data cache-line aligned
  uint8_t data[kWireMaxFrameLen];
};
static_assert(sizeof(FrameSlot) % 64 == 0);

struct FrameRingIndices {
  alignas(64) std::atomic<uint32_t> produced;  // written by the producer only
  alignas(64) std::atomic<uint32_t> consumed;  // written by the consumer only
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared across processes");

class FrameRing {
 public:
  // Bytes of ring memory for `capacity` slots (a power of two).
  static constexpr size_t bytes_for(uint32_t capacity) {
    return sizeof(FrameRingIndices) + size_t{capacity} * sizeof(FrameSlot);
  }

  // Views `memory` (bytes_for(capacity), 64-byte aligned) as a ring. Fresh memory must be zeroed;
  // memory another view already uses is taken as it is.
  void attach(void* memory, uint32_t capacity) {
    indices_ = static_cast<FrameRingIndices*>(memory);
    slots_ = reinterpret_cast<FrameSlot*>(static_cast<uint8_t*>(memory) + sizeof(FrameRingIndices));
    mask_ = capacity - 1;
    const uint32_t produced = indices_->produced.load(std::memory_order_acquire);
    const uint32_t consumed = indices_->consumed.load(std::memory_order_acquire);
    producer_ = Side{produced, consumed};
    consumer_ = Side{consumed, produced};
  }

  uint32_t capacity() const { return mask_ + 1; }

  // Producer: copies the frame into the next slot. False when the ring is full, or the frame is
  // empty or longer than kWireMaxFrameLen.
  bool push(const uint8_t* frame, uint32_t len) {
    if (len - 1 >= kWireMaxFrameLen) return false;  // also rejects len == 0
    const uint32_t next = producer_.next;
    if (next - producer_.other > mask_) {
      producer_.other = indices_->consumed.load(std::memory_order_acquire);
      if (next - producer_.other > mask_) return false;
    }
    FrameSlot& slot = slots_[next & mask_];
    slot.len = len;
    std::memcpy(slot.data, frame, len);
    producer_.next = next + 1;
    indices_->produced.store(next + 1, std::memory_order_release);
    return true;
  }

  // Consumer: length of the oldest frame, 0 when the ring is empty.
  uint32_t peek() {
    const uint32_t next = consumer_.next;
    if (next == consumer_.other) {
      consumer_.other = indices_->produced.load(std::memory_order_acquire);
      if (next == consumer_.other) return 0;
    }
    return slots_[next & mask_].len;
  }

  // Consumer: takes the oldest frame, copies at most `cap` bytes of it into `buf` and returns the
  // number copied; `*full_len` (if given) receives the frame's length, 0 when the ring was empty
  // (so with cap == 0 a frame is dropped and only `*full_len` tells).
  uint32_t pop(uint8_t* buf, uint32_t cap, uint32_t* full_len) {
    const uint32_t len = peek();
    if (full_len) *full_len = len;
    if (len == 0) return 0;
    const uint32_t next = consumer_.next;
    const uint32_t copied = len < cap ? len : cap;
    std::memcpy(buf, slots_[next & mask_].data, copied);
    consumer_.next = next + 1;
    indices_->consumed.store(next + 1, std::memory_order_release);
    return copied;
  }

 private:
  struct Side {
    uint32_t next;   // this side's own index
    uint32_t other;  // last seen value of the other side's index
  };
  FrameRingIndices* indices_ = nullptr;
  FrameSlot* slots_ = nullptr;
  uint32_t mask_ = 0;
  alignas(64) Side producer_{};
  alignas(64) Side consumer_{};
};

}  // namespace mana::emu
