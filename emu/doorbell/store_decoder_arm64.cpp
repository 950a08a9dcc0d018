// SPDX-License-Identifier: BSD-3-Clause
// AArch64 store decoder (see store_decoder_arm64.h). Encodings follow the Arm ARM (DDI 0487),
// C4.1.x "Loads and Stores": the field names below are its names.
#include "doorbell/store_decoder_arm64.h"
#include "doorbell/store_value.h"

namespace mana::emu::doorbell::arm64 {
namespace {

// Bits [hi:lo] of the instruction word.
constexpr uint32_t field(uint32_t insn, unsigned hi, unsigned lo) {
  return (insn >> lo) & ((uint32_t{1} << (hi - lo + 1)) - 1);
}

constexpr uint64_t sign_extend(uint64_t v, unsigned bits) {
  const unsigned shift = 64 - bits;
  return static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
}

// A value or index operand: 31 is the zero register.
uint64_t xreg(const RegisterFile& regs, uint32_t n) { return n == kSpOrZero ? 0 : regs.x[n]; }

// A base operand: 31 is SP.
uint64_t base_reg(const RegisterFile& regs, uint32_t n) {
  return n == kSpOrZero ? regs.sp : regs.x[n];
}

enum class Indexing : uint8_t { kOffset, kPre, kPost };

void set_address(const RegisterFile& regs, uint32_t n, uint64_t offset, Indexing indexing,
                 DecodedStore& out) {
  const uint64_t base = base_reg(regs, n);
  out.address = indexing == Indexing::kPost ? base : base + offset;
  if (indexing != Indexing::kOffset) {
    out.writeback = true;
    out.base = static_cast<uint8_t>(n);
    out.new_base = base + offset;
  }
}

// The single-register store of the register-offset, immediate and unsigned-offset classes:
// size, V and opc tell the width; every other opc is a load or a prefetch.
bool single_width(uint32_t insn, unsigned& width) {
  const uint32_t size = field(insn, 31, 30);
  const uint32_t opc = field(insn, 23, 22);
  if (opc == 0) {
    width = 1u << size;
    return true;
  }
  width = 16;  // STR Q is opc 10 with size 00
  return field(insn, 26, 26) == 1 && opc == 2 && size == 0;
}

// The value of a `width`-byte store from register t: X/W, or the low end of a SIMD&FP register.
void set_value(const RegisterFile& regs, bool simd, uint32_t t, unsigned width, DecodedStore& out) {
  out.width = static_cast<uint8_t>(width);
  if (simd) {
    out.value = low_bytes(regs.v[t].lo, width);
    out.value_high = width == 16 ? regs.v[t].hi : 0;
  } else {
    out.value = low_bytes(xreg(regs, t), width);
  }
}

constexpr unsigned log2_width(unsigned width) {
  return width == 1 ? 0 : width == 2 ? 1 : width == 4 ? 2 : width == 8 ? 3 : 4;
}

// size:111:V:01:opc:imm12:Rn:Rt; the offset is imm12 scaled by the access size.
bool unsigned_offset(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  unsigned width;
  if (!single_width(insn, width)) return false;
  const uint64_t offset = uint64_t{field(insn, 21, 10)} << log2_width(width);
  set_address(regs, field(insn, 9, 5), offset, Indexing::kOffset, out);
  set_value(regs, field(insn, 26, 26), field(insn, 4, 0), width, out);
  return true;
}

// size:111:V:00:opc:0:imm9:op:Rn:Rt; op 00 STUR, 01 post-index, 11 pre-index (10: STTR).
bool immediate9(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  static constexpr Indexing kByOp[4] = {Indexing::kOffset, Indexing::kPost, Indexing::kOffset,
                                        Indexing::kPre};
  unsigned width;
  const uint32_t op = field(insn, 11, 10);
  if (op == 2 || !single_width(insn, width)) return false;
  set_address(regs, field(insn, 9, 5), sign_extend(field(insn, 20, 12), 9), kByOp[op], out);
  set_value(regs, field(insn, 26, 26), field(insn, 4, 0), width, out);
  return true;
}

// size:111:V:00:opc:1:Rm:option:S:10:Rn:Rt; Rm extended by option, shifted by the size when S.
bool register_offset(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  unsigned width;
  if (!single_width(insn, width)) return false;
  const uint64_t m = xreg(regs, field(insn, 20, 16));
  uint64_t index;
  switch (field(insn, 15, 13)) {
    case 2:  // UXTW
      index = m & 0xFFFFFFFFu;
      break;
    case 3:  // LSL (UXTX)
    case 7:  // SXTX
      index = m;
      break;
    case 6:  // SXTW
      index = sign_extend(m & 0xFFFFFFFFu, 32);
      break;
    default:  // byte and halfword extends are unallocated here
      return false;
  }
  const unsigned shift = field(insn, 12, 12) ? log2_width(width) : 0;
  set_address(regs, field(insn, 9, 5), index << shift, Indexing::kOffset, out);
  set_value(regs, field(insn, 26, 26), field(insn, 4, 0), width, out);
  return true;
}

// size:111:0:00:A:R:1:Rs:o3:opc:00:Rn:Rt; SWP is o3 1, opc 000: stores Rs, loads the old value
// into Rt.
bool atomic_memory(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  if (field(insn, 26, 26) != 0 || field(insn, 15, 15) != 1 || field(insn, 14, 12) != 0) {
    return false;
  }
  const unsigned width = 1u << field(insn, 31, 30);
  set_address(regs, field(insn, 9, 5), 0, Indexing::kOffset, out);
  set_value(regs, false, field(insn, 20, 16), width, out);
  out.exchange = true;
  out.exchange_reg = static_cast<uint8_t>(field(insn, 4, 0));
  return true;
}

// opc:101:V:mode:L:imm7:Rt2:Rn:Rt; mode 000 STNP, 001 post-index, 010 offset, 011 pre-index.
bool pair(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  static constexpr Indexing kByMode[4] = {Indexing::kOffset, Indexing::kPost, Indexing::kOffset,
                                          Indexing::kPre};
  if (field(insn, 25, 25) != 0 || field(insn, 22, 22) != 0) return false;  // loads
  const bool simd = field(insn, 26, 26);
  const uint32_t opc = field(insn, 31, 30);
  unsigned element;  // W or S: 4; X or D: 8. Not STGP (opc 01, V 0) nor Q pairs (32 bytes)
  if (opc == 0) {
    element = 4;
  } else if (opc == (simd ? 1u : 2u)) {
    element = 8;
  } else {
    return false;
  }
  const uint64_t offset = sign_extend(field(insn, 21, 15), 7) << log2_width(element);
  set_address(regs, field(insn, 9, 5), offset, kByMode[field(insn, 24, 23)], out);
  const uint32_t t = field(insn, 4, 0), t2 = field(insn, 14, 10);
  const auto first = [&](uint32_t r) { return simd ? regs.v[r].lo : xreg(regs, r); };
  out.width = static_cast<uint8_t>(2 * element);
  if (element == 4) {
    out.value = low_bytes(first(t), 4) | (low_bytes(first(t2), 4) << 32);
  } else {
    out.value = first(t);
    out.value_high = first(t2);
  }
  return true;
}

// size:001000:o2:L:o1:Rs:o0:Rt2:Rn:Rt. o2 0, o1 0: STXR/STLXR; o2 0, o1 1, size 1x: STXP/STLXP;
// o2 1, o1 0, o0 1: STLR. o2 1, o1 1 is CAS and o1 1 with size 0x CASP: not stores we complete.
// The fields an instruction does not use (STLR's Rs and Rt2, STXR's Rt2) are should-be-one: a CPU
// that ran the store anyway ignored them, and so does the decoder (as binutils does).
bool exclusive_or_ordered(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  if (field(insn, 22, 22) != 0) return false;  // loads
  const uint32_t size = field(insn, 31, 30);
  const uint32_t o2 = field(insn, 23, 23), o1 = field(insn, 21, 21), o0 = field(insn, 15, 15);
  const uint32_t s = field(insn, 20, 16), t2 = field(insn, 14, 10), t = field(insn, 4, 0);
  set_address(regs, field(insn, 9, 5), 0, Indexing::kOffset, out);
  if (o2 == 1) {
    if (o1 != 0 || o0 != 1) return false;  // STLLR, CAS
    set_value(regs, false, t, 1u << size, out);
    return true;
  }
  out.exclusive = true;
  out.status = static_cast<uint8_t>(s);
  if (o1 == 0) {
    set_value(regs, false, t, 1u << size, out);
    return true;
  }
  if (size < 2) return false;  // CASP
  if (size == 2) {
    out.width = 8;
    out.value = low_bytes(xreg(regs, t), 4) | (low_bytes(xreg(regs, t2), 4) << 32);
  } else {
    out.width = 16;
    out.value = xreg(regs, t);
    out.value_high = xreg(regs, t2);
  }
  return true;
}

// size:011001:opc:0:imm9:00:Rn:Rt; opc 00 is STLUR (the others: LDAPUR loads).
bool release_unscaled(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  if (field(insn, 23, 22) != 0 || field(insn, 21, 21) != 0 || field(insn, 11, 10) != 0) {
    return false;
  }
  set_address(regs, field(insn, 9, 5), sign_extend(field(insn, 20, 12), 9), Indexing::kOffset, out);
  set_value(regs, false, field(insn, 4, 0), 1u << field(insn, 31, 30), out);
  return true;
}

// ST1 of one lane: 0:Q:0011010:L:R:00000:opcode:S:size:Rn:Rt, or 0011011 with Rm post-index
// (Rm 31: by the lane's size). L 0 and R 0 with opcode 000/010/100 is ST1 (others: ST2..ST4).
bool single_lane(uint32_t insn, const RegisterFile& regs, DecodedStore& out) {
  const bool post = field(insn, 23, 23);
  const uint32_t m = field(insn, 20, 16);
  if (field(insn, 22, 21) != 0 || (!post && m != 0)) return false;
  const uint32_t q = field(insn, 30, 30), s = field(insn, 12, 12), size = field(insn, 11, 10);
  unsigned width, lane;
  switch (field(insn, 15, 13)) {
    case 0:  // B: lane Q:S:size
      width = 1;
      lane = (q << 3) | (s << 2) | size;
      break;
    case 2:  // H: lane Q:S:size<1>, size<0> 0
      if ((size & 1) != 0) return false;
      width = 2;
      lane = (q << 2) | (s << 1) | (size >> 1);
      break;
    case 4:  // S (size 00): lane Q:S; D (size 01, S 0): lane Q
      if (size == 0) {
        width = 4;
        lane = (q << 1) | s;
      } else if (size == 1 && s == 0) {
        width = 8;
        lane = q;
      } else {
        return false;
      }
      break;
    default:
      return false;
  }
  const uint64_t offset = !post ? 0 : m == kSpOrZero ? width : regs.x[m];
  set_address(regs, field(insn, 9, 5), offset, post ? Indexing::kPost : Indexing::kOffset, out);
  const Vreg& v = regs.v[field(insn, 4, 0)];
  const unsigned bit = lane * width * 8;  // the lane's first bit in the 128-bit register
  out.width = static_cast<uint8_t>(width);
  out.value = low_bytes(bit < 64 ? v.lo >> bit : v.hi >> (bit - 64), width);
  return true;
}

}  // namespace

bool decode_store(uint32_t insn, const RegisterFile& regs, DecodedStore& out) noexcept {
  out = DecodedStore{};
  // Classes by their fixed bits (op0 x1x0 is Loads and Stores).
  if (field(insn, 29, 27) == 7) {  // size:111:V:...
    switch (field(insn, 25, 24)) {
      case 1:
        return unsigned_offset(insn, regs, out);
      case 0:
        if (field(insn, 21, 21) == 0) return immediate9(insn, regs, out);
        if (field(insn, 11, 10) == 2) return register_offset(insn, regs, out);
        if (field(insn, 11, 10) == 0) return atomic_memory(insn, regs, out);
        return false;  // LDRAA/LDRAB
      default:
        return false;
    }
  }
  if (field(insn, 29, 27) == 5) return pair(insn, regs, out);
  if (field(insn, 29, 24) == 0x08) return exclusive_or_ordered(insn, regs, out);
  if (field(insn, 29, 24) == 0x19) return release_unscaled(insn, regs, out);
  if (field(insn, 31, 31) == 0 && field(insn, 29, 24) == 0x0D) return single_lane(insn, regs, out);
  return false;
}

}  // namespace mana::emu::doorbell::arm64
