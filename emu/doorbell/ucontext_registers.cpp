// SPDX-License-Identifier: BSD-3-Clause
#include "doorbell/ucontext_registers.h"

namespace mana::emu::doorbell {
namespace {

// gregs index of each register, in x86 encoding order.
constexpr int kGregOf[16] = {
    REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

}  // namespace

void register_file_from(const ucontext_t& context, RegisterFile& regs) noexcept {
  const greg_t* gregs = context.uc_mcontext.gregs;
  for (int i = 0; i < 16; ++i) regs.gpr[i] = static_cast<uint64_t>(gregs[kGregOf[i]]);
  regs.rip = static_cast<uint64_t>(gregs[REG_RIP]);
  const auto* fp = context.uc_mcontext.fpregs;
  for (int i = 0; i < 16; ++i) {
    const uint32_t* e = fp != nullptr ? fp->_xmm[i].element : nullptr;
    regs.xmm[i].lo = e != nullptr ? (uint64_t{e[1]} << 32) | e[0] : 0;
    regs.xmm[i].hi = e != nullptr ? (uint64_t{e[3]} << 32) | e[2] : 0;
  }
}

void complete_exchange(ucontext_t& context, const DecodedStore& store,
                       uint64_t old_value) noexcept {
  auto& reg = context.uc_mcontext.gregs[kGregOf[store.exchange_gpr & 15]];
  auto bits = static_cast<uint64_t>(reg);
  if (store.width >= 4) {
    bits = store.width == 4 ? old_value & 0xFFFFFFFFu : old_value;
  } else {
    const unsigned shift = store.exchange_high_byte ? 8 : 0;
    const uint64_t mask = ((uint64_t{1} << (8 * store.width)) - 1) << shift;
    bits = (bits & ~mask) | ((old_value << shift) & mask);
  }
  reg = static_cast<greg_t>(bits);
}

}  // namespace mana::emu::doorbell
