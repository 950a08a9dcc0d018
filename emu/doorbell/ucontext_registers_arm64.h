// SPDX-License-Identifier: BSD-3-Clause
// The saved registers of a signal's ucontext as the AArch64 decoder's RegisterFile (Linux
// AArch64). The .cpp also implements faulting_store.h for AArch64.
#pragma once

#include <ucontext.h>

#include "doorbell/store_decoder_arm64.h"

namespace mana::emu::doorbell::arm64 {

// Async-signal-safe. The SIMD&FP registers come from the FPSIMD record the kernel puts in
// `uc_mcontext.__reserved`; all zero when there is none.
void register_file_from(const ucontext_t& context, RegisterFile& regs) noexcept;

// Writes what a decoded store changes besides memory into the saved registers: base writeback,
// store-exclusive status 0, SWP's `old_value`; then moves the saved PC past the instruction.
void complete_store(ucontext_t& context, const DecodedStore& store, uint64_t old_value) noexcept;

}  // namespace mana::emu::doorbell::arm64
