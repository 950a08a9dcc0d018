// SPDX-License-Identifier: BSD-3-Clause
// A port's send-rate cap (mana-emu run --tx-pps): Azure caps each VM size's network throughput, so
// on Azure a port that can send faster sends at the VM's cap (doc/hardware.md §9, "VM bandwidth
// cap"). On the emulator the cap also pins the rate below what a shared machine's CPUs give, so
// that a rate measured before and after an event says what the event did and not what the machine
// did meanwhile. A token bucket of one millisecond's frames; 0: no cap.
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
    const Clock::time_point now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min(burst_, tokens_ + elapsed * pps_);
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  uint32_t pps_ = 0;
  double burst_ = 1.0;
  double tokens_ = 0.0;
  Clock::time_point last_{};
};

}  // namespace mana::emu
