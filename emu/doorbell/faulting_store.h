// SPDX-License-Identifier: BSD-3-Clause
// The architecture's half of the doorbell trap (trap.cpp): decode the store that faulted, then
// finish it as the CPU would have and resume after it. meson builds one implementation:
// ucontext_registers.cpp on x86-64, ucontext_registers_arm64.cpp on AArch64. All of it is
// async-signal-safe.
#pragma once

#include <ucontext.h>

#include <cstdint>

#include "doorbell/store_decoder.h"
#include "doorbell/store_decoder_arm64.h"

namespace mana::emu::doorbell {

struct DecodedFault {
  uint64_t pc = 0;  // the faulting instruction; set even when decoding fails
  uint64_t address = 0;
  bool address_known = false;  // false for an x86 fs/gs store: only the fault address tells
  uint8_t width = 0;           // bytes stored (above 8: AArch64 pairs and Q registers)
  uint64_t value = 0;          // the first 8 bytes stored, zero-extended
  bool exchange = false;       // complete_faulting_store needs the memory's old value
  // The decoder's own answer, for complete_faulting_store (only one is filled in).
  DecodedStore x86;
  arm64::DecodedStore arm64;
};

// Decodes the store at the saved PC. False: not a store this architecture's decoder knows.
bool decode_faulting_store(const ucontext_t& context, DecodedFault& fault) noexcept;

// Does what the instruction does besides the store (`old_value`: the memory's contents, used by an
// exchange): register writes, base writeback, store-exclusive success; then moves the saved PC
// past it.
void complete_faulting_store(ucontext_t& context, const DecodedFault& fault,
                             uint64_t old_value) noexcept;

// One line on stderr naming `reason` and the instruction at `pc`, then abort().
[[noreturn]] void abort_on_faulting_store(const char* reason, uint64_t pc) noexcept;

}  // namespace mana::emu::doorbell
