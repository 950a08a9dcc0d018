// SPDX-License-Identifier: BSD-3-Clause
// Prefetch hints of the data path. They change no memory and never fault, so the device does
// nothing it would not do without them. A device thread on its own core finds the CQE slots the
// driver polled, the driver's newest WQEs and the buffers it reposted in the other core's cache:
// writing a CQE slot or a buffer first takes its line back from that core, and under x86's store
// order every later store of the device waits behind that request. Asked for a few items ahead, the
// transfer overlaps with the work on the items before (doc/performance-history.md, "The device
// model's prefetch hints").
#pragma once

namespace mana::emu {

// A line the device is about to write, fetched for ownership: PREFETCHW on x86-64 (without
// -mprfchw, GCC turns the builtin's write hint into a read prefetch, which leaves the ownership
// request to the store itself).
[[gnu::always_inline]] inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
  // The address in a register: `p` may be any value a driver wrote into an SGE (the instruction
  // never faults), so no C++ dereference of it is formed.
  asm volatile("prefetchw (%0)" : : "r"(p));
#else
  __builtin_prefetch(p, 1);
#endif
}

}  // namespace mana::emu
