// SPDX-License-Identifier: BSD-3-Clause
// The saved registers of a signal's ucontext as the decoder's RegisterFile (Linux x86-64). The
// .cpp also implements faulting_store.h for x86-64.
#pragma once

#include <ucontext.h>

#include "doorbell/store_decoder.h"

namespace mana::emu::doorbell {

// Async-signal-safe. XMM registers come from the FXSAVE area (`uc_mcontext.fpregs`).
void register_file_from(const ucontext_t& context, RegisterFile& regs) noexcept;

// Completes the load half of a decoded xchg: puts `old_value` (the memory's previous contents) in
// the saved register as the CPU would have (8/16-bit: merged, 32-bit: zero-extended).
void complete_exchange(ucontext_t& context, const DecodedStore& store, uint64_t old_value) noexcept;

}  // namespace mana::emu::doorbell
