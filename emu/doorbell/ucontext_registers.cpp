// SPDX-License-Identifier: BSD-3-Clause
#include "doorbell/ucontext_registers.h"

#include "doorbell/faulting_store.h"
#include "doorbell/store_abort.h"

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

bool decode_faulting_store(const ucontext_t& context, DecodedFault& fault) noexcept {
  fault = DecodedFault{};
  RegisterFile regs;
  register_file_from(context, regs);
  fault.pc = regs.rip;
  DecodedStore& store = fault.x86;
  if (!decode_store(reinterpret_cast<const uint8_t*>(regs.rip), kMaxInstructionLength, regs,
                    store)) {
    return false;
  }
  fault.address = store.address;
  fault.address_known = !store.segment_override;
  fault.width = store.width;
  fault.value = store.value;
  fault.exchange = store.exchange;
  return true;
}

void complete_faulting_store(ucontext_t& context, const DecodedFault& fault,
                             uint64_t old_value) noexcept {
  if (fault.x86.exchange) complete_exchange(context, fault.x86, old_value);
  context.uc_mcontext.gregs[REG_RIP] += fault.x86.length;
}

void abort_on_faulting_store(const char* reason, uint64_t pc) noexcept {
  abort_on_store(reason, pc);
}

}  // namespace mana::emu::doorbell
