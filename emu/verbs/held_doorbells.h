// SPDX-License-Identifier: BSD-3-Clause
// Polled doorbells under lockstep with several queues per context (doc/emulator.md "Lockstep"):
// all SQs (RQs) of a context store into one slot of its doorbell page, and a port start rings
// every queue's doorbell at once, before the application can step the device, so a sampling
// device would see only the last. From each queue creation until the application's next step the
// context's page is held: mapped read-only and trapped, each store handed to the device as it was
// made (doc/hardware.md §4.8: the NIC receives every store, keyed by the queue id it carries).
// After the step the page is plain memory again and sampled; the application then steps between
// two doorbells of one slot (one burst per queue, then a step).
#pragma once

#include "verbs/objects.h"

namespace mana::emu::verbs {

// At context open, lockstep and poll mode: the FIFO that held stores go to. An errno value.
int held_doorbells_open(EmuContext* ctx);
// Under Runtime::lock(), at a queue creation: the page is held until the next step. False (one
// line on stderr) if it cannot be trapped.
bool hold_doorbells(EmuContext* ctx);
// The next step has handed the held stores to the device: the page is writable and sampled again.
void release_doorbells(EmuContext* ctx);
// At context close: released, and the FIFO drained and forgotten.
void held_doorbells_close(EmuContext* ctx);

}  // namespace mana::emu::verbs
