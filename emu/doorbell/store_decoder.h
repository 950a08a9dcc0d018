// SPDX-License-Identifier: BSD-3-Clause
// Decoder for the x86-64 store instructions a compiler emits for an MMIO write (doc/emulator.md,
// trap mode): given the bytes at the faulting RIP and the saved registers, it tells how long the
// instruction is, how many bytes it stores and which value. Pure: no globals, no allocation, safe
// to call from a signal handler.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana::emu::doorbell {

// General-purpose registers in x86 encoding order (the number ModRM/REX name them by).
enum Gpr : uint8_t {
  kRax,
  kRcx,
  kRdx,
  kRbx,
  kRsp,
  kRbp,
  kRsi,
  kRdi,
  kR8,
  kR9,
  kR10,
  kR11,
  kR12,
  kR13,
  kR14,
  kR15,
};

struct Xmm {
  uint64_t lo = 0;  // bits [63:0]
  uint64_t hi = 0;  // bits [127:64]
};

// The registers a store can take its value or address from.
struct RegisterFile {
  uint64_t gpr[16] = {};  // indexed by Gpr
  uint64_t rip = 0;       // address of the instruction being decoded
  Xmm xmm[16] = {};
};

struct DecodedStore {
  uint8_t length = 0;  // instruction length in bytes
  uint8_t width = 0;   // bytes stored: 1, 2, 4 or 8
  uint64_t value = 0;  // the stored value, zero-extended to 64 bits
  // Effective address without any segment base; meaningless when `segment_override` (fs/gs).
  uint64_t address = 0;
  bool segment_override = false;
  // xchg (a seq_cst store: g++ and clang emit `xchg r, m` for __atomic_store_n(..., SEQ_CST)) also
  // loads the old memory value into register `exchange_gpr` (its low `width` bytes, or bits 15:8
  // when `exchange_high_byte`; a 4-byte exchange zero-extends into the whole register).
  bool exchange = false;
  uint8_t exchange_gpr = 0;
  bool exchange_high_byte = false;
};

// Longest legal x86 instruction: the decoder never reads past code[kMaxInstructionLength - 1].
inline constexpr size_t kMaxInstructionLength = 15;

// Decodes the store at `code` (at most `available` readable bytes, read front to back and only as
// far as needed). Returns false for anything that is not a supported store to memory:
//   mov r/m, r (88/89), xchg r/m, r (86/87), mov r/m, imm (C6/C7 /0), mov moffs, al/eax/rax
//   (A2/A3), movnti (0F C3), movd/movq r/m, xmm (66 [REX.W] 0F 7E), movq m64, xmm (66 0F D6),
//   movss/movsd m, xmm (F3/F2 0F 11), movlps/movlpd (0F 13 / 66 0F 13), movhps/movhpd (0F 17 / 66
//   0F 17), and the VEX (C5/C4) forms of the SSE ones, with operand-size, address-size, segment,
//   lock and REX prefixes and every ModRM/SIB/displacement form including RIP-relative.
bool decode_store(const uint8_t* code, size_t available, const RegisterFile& regs,
                  DecodedStore& out) noexcept;

}  // namespace mana::emu::doorbell
