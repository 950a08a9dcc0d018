// SPDX-License-Identifier: BSD-3-Clause
// Trap mode for doorbell pages (doc/emulator.md): every store into a registered page faults, and a
// process-wide SIGSEGV handler turns it into a DoorbellRecord pushed to the page's FIFO, then
// resumes after the store. Exact for any number of threads and processes (each process registers
// its own mapping of the page and of the FIFO).
//
// The handler is installed on the first registration and stays; faults that are not stores into
// a registered page go to the handler that was installed before it (or to the default action), so
// real crashes still crash. A store the decoder does not know aborts with one line on stderr naming
// the instruction bytes. All state is constant-initialized: usable from an LD_PRELOAD library's
// constructors, no static-initialization order, no exceptions, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "doorbell/doorbell_fifo.h"

namespace mana::emu::doorbell {

inline constexpr size_t kTrapPageSize = 4096;
inline constexpr size_t kMaxTrappedPages = 256;

// `page` (4 KiB aligned) must already be mapped PROT_READ in this process. Stores into it are
// recorded as {context_id, byte offset, value} in `fifo`. Register a page once, from one thread at
// a time per page (two concurrent registrations of the same page are not detected). Not for the
// data path: it may install the SIGSEGV handler. Returns 0, or EINVAL (misaligned page, null fifo),
// EEXIST (already registered), ENOSPC (kMaxTrappedPages registered), or the errno of a failed
// sigaction.
int trap_register(void* page, uint32_t context_id, DoorbellFifo* fifo);
// Stops trapping `page`: from now on a store into it is a genuine crash. No store into the page may
// be in flight. Returns 0 or ENOENT.
int trap_unregister(void* page);

}  // namespace mana::emu::doorbell
