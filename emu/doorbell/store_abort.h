// SPDX-License-Identifier: BSD-3-Clause
// The trap's last word: one line on stderr naming the instruction, then abort(). Async-signal-safe
// (write(2) and abort() only), for stores the decoder cannot handle.
#pragma once

#include <cstdint>

namespace mana::emu::doorbell {

// Writes "mana-emu doorbell trap: <reason> at rip 0x...: bytes xx xx ..." and aborts. Prints the
// bytes at `rip` up to 15 or the end of rip's page, whichever comes first (only those are known to
// be mapped).
[[noreturn]] void abort_on_store(const char* reason, uint64_t rip) noexcept;

}  // namespace mana::emu::doorbell
