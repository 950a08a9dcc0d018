// The saved registers of a signal's ucontext as the decoder's RegisterFile (Linux x86-64).
#pragma once

#include <ucontext.h>

#include "doorbell/store_decoder.h"

namespace mana::emu::doorbell {

// Async-signal-safe. XMM registers come from the FXSAVE area (`uc_mcontext.fpregs`).
void register_file_from(const ucontext_t& context, RegisterFile& regs) noexcept;

}  // namespace mana::emu::doorbell
