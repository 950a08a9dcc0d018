// SPDX-License-Identifier: BSD-3-Clause
// Where a port stands in its recovery from a VF removal (recovery.h runs the steps): the control
// operations that need the VF ask it. Only the port's state word: no step of the recovery.
#pragma once

#include <atomic>
#include <cstdint>

#include "priv.h"

namespace mana {

enum class Recovery : uint32_t {
  kNone = 0,     // the VF is there
  kTearingDown,  // fatal event seen: the old objects are still to be destroyed
  kWaiting,      // old objects gone: waiting for the VF to come back
  kFailed,       // it did not come back in time (or recovery_timeout=0): the port stays stopped
};

// Written by the interrupt thread, read by the control path of any thread.
inline Recovery recovery_state(const PortPriv& priv) {
  return static_cast<Recovery>(std::atomic_ref<uint32_t>(const_cast<uint32_t&>(priv.recovery))
                                   .load(std::memory_order_seq_cst));
}

}  // namespace mana
