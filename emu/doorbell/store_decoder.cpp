// SPDX-License-Identifier: BSD-3-Clause
// x86-64 store decoder (see store_decoder.h). Encodings follow the Intel SDM vol. 2, ch. 2
// (instruction format, ModRM/SIB tables, REX and VEX prefixes).
#include "doorbell/store_decoder.h"
#include "doorbell/store_value.h"

namespace mana::emu::doorbell {
namespace {

// Reads instruction bytes front to back, never beyond the readable or the architectural limit.
class Cursor {
 public:
  Cursor(const uint8_t* code, size_t available)
      : code_(code),
        limit_(available < kMaxInstructionLength ? available : kMaxInstructionLength) {}

  bool byte(uint8_t& b) {
    if (pos_ >= limit_) return false;
    b = code_[pos_++];
    return true;
  }
  // Little-endian unsigned value of `n` bytes (n <= 8).
  bool little_endian(unsigned n, uint64_t& v) {
    v = 0;
    for (unsigned i = 0; i < n; ++i) {
      uint8_t b;
      if (!byte(b)) return false;
      v |= uint64_t{b} << (8 * i);
    }
    return true;
  }
  size_t position() const { return pos_; }

 private:
  const uint8_t* code_;
  size_t limit_;
  size_t pos_ = 0;
};

uint64_t sign_extend(uint64_t v, unsigned bytes) {
  const unsigned shift = 64 - 8 * bytes;
  return static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
}

// Register-extension bits, from a REX or a VEX prefix (VEX stores them inverted).
struct Extension {
  bool w = false, r = false, x = false, b = false;
  bool any_rex = false;  // a REX prefix was present: 8-bit regs 4..7 are spl..dil, not ah..bh
};

// Mandatory/legacy prefix state.
enum class Mandatory : uint8_t { kNone, k66, kF3, kF2 };

// The memory operand and the register operand of a ModRM byte.
struct ModRm {
  uint8_t reg = 0;            // ModRM.reg extended by REX.R / VEX.R
  uint8_t reg_field = 0;      // ModRM.reg as encoded (opcode extension for C6/C7)
  uint64_t address = 0;       // base + index*scale + displacement (without RIP)
  bool rip_relative = false;  // add the next instruction's RIP
};

// Decodes ModRM, SIB and displacement; rejects register (mod == 3) forms: they are not stores.
bool decode_modrm(Cursor& c, const Extension& ext, const RegisterFile& regs, ModRm& m) {
  uint8_t modrm;
  if (!c.byte(modrm)) return false;
  const unsigned mod = modrm >> 6;
  const unsigned rm = modrm & 7;
  if (mod == 3) return false;
  m.reg_field = (modrm >> 3) & 7;
  m.reg = static_cast<uint8_t>(m.reg_field | (ext.r ? 8 : 0));

  uint64_t address = 0;
  bool disp32_without_base = false;
  if (rm == 4) {  // SIB follows
    uint8_t sib;
    if (!c.byte(sib)) return false;
    const unsigned index = ((sib >> 3) & 7) | (ext.x ? 8 : 0);
    const unsigned base = sib & 7;
    if (index != kRsp) address += regs.gpr[index] << (sib >> 6);
    if (base == 5 && mod == 0) {
      disp32_without_base = true;
    } else {
      address += regs.gpr[base | (ext.b ? 8 : 0)];
    }
  } else if (rm == 5 && mod == 0) {
    m.rip_relative = true;
  } else {
    address += regs.gpr[rm | (ext.b ? 8 : 0)];
  }

  const unsigned disp_bytes = mod == 1                                              ? 1
                              : (mod == 2 || m.rip_relative || disp32_without_base) ? 4
                                                                                    : 0;
  uint64_t disp = 0;
  if (!c.little_endian(disp_bytes, disp)) return false;
  if (disp_bytes != 0) address += sign_extend(disp, disp_bytes);
  m.address = address;
  return true;
}

// Without REX, 8-bit register numbers 4..7 are ah, ch, dh, bh (bits 15:8 of registers 0..3).
bool is_high_byte(uint8_t reg, unsigned width, const Extension& ext) {
  return width == 1 && !ext.any_rex && reg >= 4 && reg < 8;
}

uint64_t gpr_value(const RegisterFile& regs, uint8_t reg, unsigned width, const Extension& ext) {
  if (is_high_byte(reg, width, ext)) return (regs.gpr[reg - 4] >> 8) & 0xFF;
  return low_bytes(regs.gpr[reg], width);
}

// SSE stores from an XMM register: which width and which half, by mandatory prefix and opcode.
bool sse_store(Mandatory mp, uint8_t opcode, bool w, unsigned& width, bool& high_half) {
  high_half = false;
  switch (opcode) {
    case 0xD6:  // movq m64, xmm
      width = 8;
      return mp == Mandatory::k66;
    case 0x7E:  // movd r/m32, xmm / movq r/m64, xmm (REX.W / VEX.W1)
      width = w ? 8 : 4;
      return mp == Mandatory::k66;
    case 0x11:  // movss m32, xmm / movsd m64, xmm (no prefix / 66: 128-bit movups/movupd)
      width = mp == Mandatory::kF2 ? 8 : 4;
      return mp == Mandatory::kF2 || mp == Mandatory::kF3;
    case 0x13:  // movlps / movlpd m64, xmm
    case 0x17:  // movhps / movhpd m64, xmm
      width = 8;
      high_half = opcode == 0x17;
      return mp == Mandatory::kNone || mp == Mandatory::k66;
    default:
      return false;
  }
}

// The common tail of every form: optional immediate, then the effective address.
bool finish(Cursor& c, const RegisterFile& regs, const ModRm& m, bool addr32, DecodedStore& out) {
  out.length = static_cast<uint8_t>(c.position());
  uint64_t address = m.address;
  if (m.rip_relative) address += regs.rip + out.length;
  out.address = addr32 ? address & 0xFFFFFFFFu : address;
  return true;
}

bool decode_vex(Cursor& c, uint8_t first, const RegisterFile& regs, bool addr32,
                DecodedStore& out) {
  uint8_t p1, p2;
  if (!c.byte(p1)) return false;
  Extension ext;
  ext.r = !(p1 & 0x80);
  if (first == 0xC4) {  // 3-byte VEX: RXB.mmmmm, W.vvvv.L.pp
    ext.x = !(p1 & 0x40);
    ext.b = !(p1 & 0x20);
    if ((p1 & 0x1F) != 1) return false;  // only the 0F map holds our stores
    if (!c.byte(p2)) return false;
    ext.w = (p2 & 0x80) != 0;
  } else {  // 2-byte VEX: R.vvvv.L.pp, map 0F, W0
    p2 = p1;
  }
  static constexpr Mandatory kByPp[4] = {Mandatory::kNone, Mandatory::k66, Mandatory::kF3,
                                         Mandatory::kF2};
  uint8_t opcode;
  if (!c.byte(opcode)) return false;
  unsigned width;
  bool high_half;
  if (!sse_store(kByPp[p2 & 3], opcode, ext.w, width, high_half)) return false;
  ModRm m;
  if (!decode_modrm(c, ext, regs, m)) return false;
  const Xmm& x = regs.xmm[m.reg & 15];
  out.width = static_cast<uint8_t>(width);
  out.value = low_bytes(high_half ? x.hi : x.lo, width);
  return finish(c, regs, m, addr32, out);
}

bool decode_0f(Cursor& c, Mandatory mp, const Extension& ext, const RegisterFile& regs, bool addr32,
               DecodedStore& out) {
  uint8_t opcode;
  if (!c.byte(opcode)) return false;
  ModRm m;
  if (opcode == 0xC3) {  // movnti m32/m64, r32/r64
    if (mp != Mandatory::kNone || !decode_modrm(c, ext, regs, m)) return false;
    out.width = ext.w ? 8 : 4;
    out.value = low_bytes(regs.gpr[m.reg], out.width);
    return finish(c, regs, m, addr32, out);
  }
  unsigned width;
  bool high_half;
  if (!sse_store(mp, opcode, ext.w, width, high_half)) return false;
  if (!decode_modrm(c, ext, regs, m)) return false;
  const Xmm& x = regs.xmm[m.reg];
  out.width = static_cast<uint8_t>(width);
  out.value = low_bytes(high_half ? x.hi : x.lo, width);
  return finish(c, regs, m, addr32, out);
}

}  // namespace

bool decode_store(const uint8_t* code, size_t available, const RegisterFile& regs,
                  DecodedStore& out) noexcept {
  out = DecodedStore{};
  Cursor c(code, available);
  bool opsize = false, addr32 = false, legacy_sse_prefix = false;
  Mandatory rep = Mandatory::kNone;  // last F2/F3
  Extension ext;
  uint8_t b;
  for (;;) {
    if (!c.byte(b)) return false;
    if (b >= 0x40 && b <= 0x4F) {  // REX: only counts when the opcode follows directly
      ext = Extension{};
      ext.any_rex = true;
      ext.w = b & 8;
      ext.r = b & 4;
      ext.x = b & 2;
      ext.b = b & 1;
      continue;
    }
    bool legacy = true;
    switch (b) {
      case 0x66:
        opsize = true;
        break;
      case 0x67:
        addr32 = true;
        break;
      case 0xF2:
        rep = Mandatory::kF2;
        break;
      case 0xF3:
        rep = Mandatory::kF3;
        break;
      case 0x64:  // fs
      case 0x65:  // gs
        out.segment_override = true;
        break;
      case 0x26:
      case 0x2E:
      case 0x36:
      case 0x3E:  // es/cs/ss/ds: base 0 in 64-bit mode
      case 0xF0:  // lock
        break;
      default:
        legacy = false;
    }
    if (!legacy) break;
    legacy_sse_prefix = legacy_sse_prefix || b == 0x66 || b == 0xF2 || b == 0xF3;
    ext = Extension{};  // a REX followed by a legacy prefix is ignored
  }

  if (b == 0xC4 || b == 0xC5) {
    if (legacy_sse_prefix || ext.any_rex) return false;  // #UD before VEX
    return decode_vex(c, b, regs, addr32, out);
  }
  const Mandatory mp = rep != Mandatory::kNone ? rep : opsize ? Mandatory::k66 : Mandatory::kNone;
  const unsigned gpr_width = ext.w ? 8 : opsize ? 2 : 4;
  ModRm m;
  switch (b) {
    case 0x0F:
      return decode_0f(c, mp, ext, regs, addr32, out);
    case 0x88:  // mov r/m8, r8
    case 0x89:  // mov r/m16/32/64, r16/32/64
      if (!decode_modrm(c, ext, regs, m)) return false;
      out.width = static_cast<uint8_t>(b == 0x88 ? 1 : gpr_width);
      out.value = gpr_value(regs, m.reg, out.width, ext);
      return finish(c, regs, m, addr32, out);
    case 0x86:  // xchg r/m8, r8
    case 0x87:  // xchg r/m16/32/64, r16/32/64
      if (!decode_modrm(c, ext, regs, m)) return false;
      out.width = static_cast<uint8_t>(b == 0x86 ? 1 : gpr_width);
      out.value = gpr_value(regs, m.reg, out.width, ext);
      out.exchange = true;
      out.exchange_high_byte = is_high_byte(m.reg, out.width, ext);
      out.exchange_gpr = static_cast<uint8_t>(out.exchange_high_byte ? m.reg - 4 : m.reg);
      return finish(c, regs, m, addr32, out);
    case 0xC6:    // mov r/m8, imm8
    case 0xC7: {  // mov r/m16, imm16 / r/m32, imm32 / r/m64, sign-extended imm32
      if (!decode_modrm(c, ext, regs, m) || m.reg_field != 0) return false;
      out.width = static_cast<uint8_t>(b == 0xC6 ? 1 : gpr_width);
      const unsigned imm_bytes = out.width > 4 ? 4 : out.width;
      uint64_t imm;
      if (!c.little_endian(imm_bytes, imm)) return false;
      out.value = low_bytes(sign_extend(imm, imm_bytes), out.width);
      return finish(c, regs, m, addr32, out);
    }
    case 0xA2:    // mov moffs8, al
    case 0xA3: {  // mov moffs, ax/eax/rax
      uint64_t moffs;
      if (!c.little_endian(addr32 ? 4 : 8, moffs)) return false;
      out.width = static_cast<uint8_t>(b == 0xA2 ? 1 : gpr_width);
      out.value = low_bytes(regs.gpr[kRax], out.width);
      m.address = moffs;
      return finish(c, regs, m, addr32, out);
    }
    default:
      return false;
  }
}

}  // namespace mana::emu::doorbell
