// SPDX-License-Identifier: BSD-3-Clause
#include "vmbus/shared_port_wire.h"

#include <algorithm>
#include <cstring>

namespace mana::emu::vmbus {

SharedPortWire::SharedPortWire(WireEndpoint* wire)
    : wire_(wire),
      held_(kMaxFrame),
      queue_(size_t{kQueueFrames} * kMaxFrame),
      delivered_(kMaxFrame) {}

bool SharedPortWire::for_vf(std::span<const uint8_t> frame) const {
  if (!synthetic_open_.load(std::memory_order_acquire)) return true;
  if (!data_path_vf_.load(std::memory_order_acquire) || !vf_present()) return false;
  const bool group = !frame.empty() && (frame[0] & 1) != 0;
  return !group || !group_synthetic_.load(std::memory_order_acquire);
}

void SharedPortWire::pump() {
  while (held_len_ == 0) {
    uint32_t full = 0;
    const uint32_t len = wire_->receive(held_.data(), kMaxFrame, &full);
    if (len == 0) return;
    const std::span<const uint8_t> frame(held_.data(), len);
    if (for_vf(frame)) {
      held_len_ = len;
      held_full_ = full;
      ++counters_.to_vf;
      return;
    }
    if (count_ == kQueueFrames) {
      ++counters_.synthetic_drops;
      continue;
    }
    const unsigned slot = (head_ + count_) % kQueueFrames;
    std::memcpy(queue_.data() + size_t{slot} * kMaxFrame, frame.data(), len);
    queue_len_[slot] = len;
    ++count_;
    ++counters_.to_synthetic;
  }
}

bool SharedPortWire::transmit_synthetic(std::span<const uint8_t> frame) {
  return wire_->transmit(frame.data(), static_cast<uint32_t>(frame.size()));
}

std::span<const uint8_t> SharedPortWire::receive_synthetic() {
  wire_->receiver_polled();  // the synthetic NIC's host takes frames too: the receiver runs
  // A frame held for a VF that is gone (or switched back) goes to the synthetic NIC after all.
  if (held_len_ != 0 && !for_vf(std::span<const uint8_t>(held_.data(), held_len_)) &&
      count_ < kQueueFrames) {
    const unsigned slot = (head_ + count_) % kQueueFrames;
    std::memcpy(queue_.data() + size_t{slot} * kMaxFrame, held_.data(), held_len_);
    queue_len_[slot] = held_len_;
    ++count_;
    held_len_ = 0;
  }
  pump();
  if (count_ == 0) return {};
  const uint32_t len = queue_len_[head_];
  std::memcpy(delivered_.data(), queue_.data() + size_t{head_} * kMaxFrame, len);
  head_ = (head_ + 1) % kQueueFrames;
  --count_;
  return {delivered_.data(), len};
}

bool SharedPortWire::VfSide::transmit(const uint8_t* frame, uint32_t len) {
  return owner_->wire_->transmit(frame, len);
}

uint32_t SharedPortWire::VfSide::receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) {
  owner_->pump();
  if (owner_->held_len_ == 0) {
    if (full_len != nullptr) *full_len = 0;
    return 0;
  }
  const uint32_t len = std::min(owner_->held_len_, cap);
  std::memcpy(buf, owner_->held_.data(), len);
  if (full_len != nullptr) *full_len = owner_->held_full_;
  owner_->held_len_ = 0;
  return len;
}

uint32_t SharedPortWire::VfSide::peek() {
  owner_->pump();
  return owner_->held_len_;
}

bool SharedPortWire::VfSide::retry_later() { return owner_->wire_->retry_later(); }

bool SharedPortWire::VfSide::holds_rx_frames() const { return owner_->wire_->holds_rx_frames(); }

void SharedPortWire::VfSide::receiver_polled() { owner_->wire_->receiver_polled(); }

}  // namespace mana::emu::vmbus
