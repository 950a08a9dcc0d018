// SPDX-License-Identifier: BSD-3-Clause
#include "doorbell/ucontext_registers_arm64.h"

#include <asm/sigcontext.h>
#include <unistd.h>

#include <bit>
#include <cstdlib>

#include "doorbell/faulting_store.h"
#include "doorbell/store_value.h"

namespace mana::emu::doorbell {
namespace arm64 {
namespace {

// The V registers' halves and the instruction word are read as little-endian (aarch64_be is not
// supported).
static_assert(std::endian::native == std::endian::little);

// The kernel's records in __reserved: {magic, size} headers, a zero magic ends them. FPSIMD comes
// first in practice; the walk stays inside the area whatever it finds.
const fpsimd_context* find_fpsimd(const mcontext_t& mcontext) {
  const unsigned char* at = mcontext.__reserved;
  size_t left = sizeof mcontext.__reserved;
  while (left >= sizeof(_aarch64_ctx)) {
    const auto* head = reinterpret_cast<const _aarch64_ctx*>(at);
    if (head->magic == 0 || head->size < sizeof(_aarch64_ctx) || head->size > left) return nullptr;
    if (head->magic == FPSIMD_MAGIC) {
      return head->size >= sizeof(fpsimd_context) ? reinterpret_cast<const fpsimd_context*>(at)
                                                  : nullptr;
    }
    at += head->size;
    left -= head->size;
  }
  return nullptr;
}

// Writes X register n; 31 is XZR (a status or exchange target) or, for a base, SP.
void set_register(mcontext_t& mcontext, uint8_t n, uint64_t value, bool sp_for_31) {
  if (n < kSpOrZero) {
    mcontext.regs[n] = value;
  } else if (sp_for_31) {
    mcontext.sp = value;
  }
}

}  // namespace

void register_file_from(const ucontext_t& context, RegisterFile& regs) noexcept {
  const mcontext_t& mcontext = context.uc_mcontext;
  for (int i = 0; i < 31; ++i) regs.x[i] = mcontext.regs[i];
  regs.sp = mcontext.sp;
  regs.pc = mcontext.pc;
  const fpsimd_context* fp = find_fpsimd(mcontext);
  for (int i = 0; i < 32; ++i) {
    const unsigned __int128 v = fp != nullptr ? fp->vregs[i] : 0;
    regs.v[i] = {static_cast<uint64_t>(v), static_cast<uint64_t>(v >> 64)};
  }
}

void complete_store(ucontext_t& context, const DecodedStore& store, uint64_t old_value) noexcept {
  mcontext_t& mcontext = context.uc_mcontext;
  if (store.writeback) set_register(mcontext, store.base, store.new_base, true);
  if (store.exclusive) set_register(mcontext, store.status, 0, false);
  if (store.exchange) {
    set_register(mcontext, store.exchange_reg, low_bytes(old_value, store.width), false);
  }
  mcontext.pc += kInstructionLength;
}

}  // namespace arm64

bool decode_faulting_store(const ucontext_t& context, DecodedFault& fault) noexcept {
  fault = DecodedFault{};
  arm64::RegisterFile regs;
  arm64::register_file_from(context, regs);
  fault.pc = regs.pc;
  arm64::DecodedStore& store = fault.arm64;
  if (!arm64::decode_store(*reinterpret_cast<const uint32_t*>(regs.pc), regs, store)) return false;
  fault.address = store.address;
  fault.address_known = true;
  fault.width = store.width;
  fault.value = store.value;
  fault.exchange = store.exchange;
  return true;
}

void complete_faulting_store(ucontext_t& context, const DecodedFault& fault,
                             uint64_t old_value) noexcept {
  arm64::complete_store(context, fault.arm64, old_value);
}

// "mana-emu doorbell trap: <reason> at pc 0x...: instruction xxxxxxxx", with write(2) only.
void abort_on_faulting_store(const char* reason, uint64_t pc) noexcept {
  char line[256];
  size_t length = 0;
  const auto text = [&](const char* s) {
    while (*s != '\0' && length < sizeof line) line[length++] = *s++;
  };
  const auto hex = [&](uint64_t v, int digits) {
    for (int shift = 4 * (digits - 1); shift >= 0 && length < sizeof line; shift -= 4) {
      line[length++] = "0123456789abcdef"[(v >> shift) & 15];
    }
  };
  text("mana-emu doorbell trap: ");
  text(reason);
  text(" at pc 0x");
  hex(pc, 16);
  text(": instruction ");
  hex(*reinterpret_cast<const uint32_t*>(pc), 8);  // it just faulted, so it is mapped
  text("\n");
  for (size_t done = 0; done < length;) {
    const ssize_t n = write(STDERR_FILENO, line + done, length - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  abort();
}

}  // namespace mana::emu::doorbell
