// SPDX-License-Identifier: BSD-3-Clause
// A port's send-rate cap (mana-emu run --tx-pps): Azure caps each VM size's network throughput, so
// on Azure a port that can send faster sends at the VM's cap (doc/hardware.md §9, "VM bandwidth
// cap"). On the emulator the cap also pins the rate below what a shared machine's CPUs give, so
// that a rate measured before and after an event says what the event did and not what the machine
// did meanwhile. A token bucket of one millisecond's frames; 0: no cap. A port whose wire is
// shared with its synthetic NIC (--uio-netvsc) has one bucket for both paths, the wire's: Azure
// caps the VM's egress whatever path it takes (doc/hardware.md §9.20).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace mana::emu {

class TxRateCap {
 public:
  using Clock = std::chrono::steady_clock;

  void set(uint32_t frames_per_second) {
    pps_ = frames_per_second;
    burst_ = std::max(1.0, frames_per_second / 1000.0);
    tokens_ = burst_;
    last_ = Clock::now();
  }

  // Whether one more WQE may go to the wire now (a TSO WQE counts once).
  bool take() {
    if (pps_ == 0) return true;
    refill();
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

  // For a sender that learns how many frames it sent only afterwards (the synthetic NIC's host,
  // emu/vmbus, reads whole guest ring packets): how many may go now (UINT32_MAX without a cap),
  // then what went. A packet that carried more frames than were allowed leaves the bucket below
  // zero: what follows waits until it refilled.
  bool capped() const { return pps_ != 0; }
  uint32_t available() {
    if (pps_ == 0) return UINT32_MAX;
    refill();
    return tokens_ >= 1.0 ? static_cast<uint32_t>(tokens_) : 0;
  }
  void consume(uint64_t frames) {
    if (pps_ != 0) tokens_ -= static_cast<double>(frames);
  }

 private:
  void refill() {
    const Clock::time_point now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min(burst_, tokens_ + elapsed * pps_);
  }

  uint32_t pps_ = 0;
  double burst_ = 1.0;
  double tokens_ = 0.0;
  Clock::time_point last_{};
};

}  // namespace mana::emu
