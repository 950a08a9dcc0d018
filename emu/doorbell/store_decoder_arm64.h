// SPDX-License-Identifier: BSD-3-Clause
// Decoder for the AArch64 store instructions a compiler or DPDK emits for an MMIO write
// (doc/emulator.md, trap mode): given the faulting instruction word and the saved registers, it
// tells how many bytes are stored, which value, where, and what the instruction changes besides
// memory. Pure: no globals, no allocation, safe to call from a signal handler. Built on every
// architecture so that its tests run everywhere.
#pragma once

#include <cstdint>

namespace mana::emu::doorbell::arm64 {

// Register number 31: SP as a base register, XZR/WZR as a value or index.
inline constexpr uint8_t kSpOrZero = 31;

struct Vreg {
  uint64_t lo = 0;  // bits [63:0]
  uint64_t hi = 0;  // bits [127:64]
};

// The registers a store can take its value or address from.
struct RegisterFile {
  uint64_t x[31] = {};  // x0..x30
  uint64_t sp = 0;
  uint64_t pc = 0;  // address of the instruction (no AArch64 store addresses memory by PC)
  Vreg v[32] = {};  // the low 128 bits of the SIMD&FP registers
};

struct DecodedStore {
  uint8_t width = 0;        // bytes stored: 1, 2, 4, 8, or 16 (STP/STNP/STXP of X or D, STR Q)
  uint64_t value = 0;       // bytes 0..7 stored, zero-extended
  uint64_t value_high = 0;  // bytes 8..15 of a 16-byte store
  uint64_t address = 0;     // first byte stored
  // Pre- and post-index forms: base register `base` (31: SP) holds `new_base` afterwards.
  bool writeback = false;
  uint8_t base = 0;
  uint64_t new_base = 0;
  // Store-exclusive: the status register Ws (31: WZR, nothing to write) must read 0, success.
  bool exclusive = false;
  uint8_t status = 0;
  // SWP: the old memory value, zero-extended, goes to Xt (31: discarded).
  bool exchange = false;
  uint8_t exchange_reg = 0;
};

// Every AArch64 instruction is this long.
inline constexpr uint8_t kInstructionLength = 4;

// Decodes `insn`. Returns false for anything that is not a supported store to memory:
//   STR/STRB/STRH and STR of B/H/S/D/Q registers (unsigned offset, pre-index, post-index, register
//   offset with LSL/UXTW/SXTW/SXTX), STUR/STURB/STURH and STUR B/H/S/D/Q, STP/STNP of W, X, S and
//   D registers (not Q: 32 bytes), STLR/STLRB/STLRH, STLUR/STLURB/STLURH, STXR/STLXR (B/H/W/X),
//   STXP/STLXP, SWP/SWPA/SWPL/SWPAL (B/H/W/X) and ST1 of one lane (no offset, post-index).
bool decode_store(uint32_t insn, const RegisterFile& regs, DecodedStore& out) noexcept;

}  // namespace mana::emu::doorbell::arm64
