// SPDX-License-Identifier: BSD-3-Clause
// Lockstep mode (doc/emulator.md "Lockstep"): with MANA_EMU_LOCKSTEP=1 the process has no device
// thread; the application runs the device model by calling mana_emu_step(), which it finds with
// dlsym(RTLD_DEFAULT, "mana_emu_step") so that it needs no link to this library. One thread,
// deterministic, no cache lines shared with another core: for benchmarks of the driver alone.
#include "verbs/exports.h"
#include "verbs/runtime.h"

// One pass of every device model of the process: the trapped doorbells stored so far reach their
// devices, then each device processes its queues (TX WQEs to the wire, wire frames to RX WQEs,
// completions). Returns the work done (0: nothing was pending), or -1 when the process is not in
// lockstep mode (a device thread runs the devices, or no VF is emulated).
MANA_EMU_EXPORT int mana_emu_step(void) {
  using mana::emu::verbs::Runtime;
  Runtime* runtime = Runtime::get();
  if (runtime == nullptr || !runtime->thread().lockstep()) return -1;
  const auto work = static_cast<int>(runtime->thread().step());
  runtime->release_held_doorbells();  // the start's doorbells are in: sampling from now on
  return work;
}
