// SPDX-License-Identifier: BSD-3-Clause
// AArch64 decoder table tests: each row is one instruction word, assembled with
// `aarch64-linux-gnu-as` (`.arch armv8.5-a+lse+rcpc+memtag`) when written and checked with
// `aarch64-linux-gnu-objdump -d`; the first column is objdump's text. Runs on every architecture.
#include "doorbell/store_decoder_arm64.h"

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

namespace mana::emu::doorbell::arm64 {
namespace {

// Every byte of every register differs, so a wrong register or width shows.
uint64_t X(unsigned i) { return 0x7060504030201000ull + i * 0x0101010101010101ull; }
// x3 is the index of the register-offset forms: UXTW, SXTW and X give three different offsets.
constexpr uint64_t kX3 = 0xFFFFFFF0FFFFFFF0ull;
constexpr uint64_t kW3Unsigned = 0xFFFFFFF0ull;
constexpr uint64_t kW3Signed = static_cast<uint64_t>(-16ll);
constexpr uint64_t kSp = 0x0000FFFFF7FF0000ull;
uint64_t VLo(unsigned i) { return 0xA000000000000000ull | (uint64_t{i} << 40) | 0x0123456789ull; }
uint64_t VHi(unsigned i) { return 0xB000000000000000ull | (uint64_t{i} << 40) | 0x0FEDCBA987ull; }

RegisterFile Registers() {
  RegisterFile regs;
  for (unsigned i = 0; i < 31; ++i) regs.x[i] = i == 3 ? kX3 : X(i);
  for (unsigned i = 0; i < 32; ++i) regs.v[i] = {VLo(i), VHi(i)};
  regs.sp = kSp;
  regs.pc = 0x0000AAAA00001000ull;
  return regs;
}

uint64_t Low(uint64_t v, unsigned bytes) {
  return bytes == 8 ? v : v & ((1ull << (8 * bytes)) - 1);
}

struct Case {
  const char* text;  // objdump's disassembly
  uint32_t word;
  unsigned width;
  uint64_t value;
  uint64_t address;
  uint64_t value_high = 0;
  int base = -1;  // pre/post-index: the base register and its new value
  uint64_t new_base = 0;
  int status = -1;    // store-exclusive: the status register
  int exchange = -1;  // SWP: the register that receives the old value
};

Case High(Case c, uint64_t value_high) {
  c.value_high = value_high;
  return c;
}
Case Writeback(Case c, int base, uint64_t new_base) {
  c.base = base;
  c.new_base = new_base;
  return c;
}
Case Status(Case c, int status) {
  c.status = status;
  return c;
}
Case Exchange(Case c, int reg) {
  c.exchange = reg;
  return c;
}

std::vector<Case> StoreCases() {
  const uint64_t x1 = X(1), x2 = X(2), w1 = Low(X(1), 4), h1 = Low(X(1), 2), b1 = Low(X(1), 1);
  const uint64_t w1w2 = Low(X(1), 4) | (Low(X(2), 4) << 32);
  const uint64_t s1s2 = Low(VLo(1), 4) | (Low(VLo(2), 4) << 32);
  return {
      // STR/STRH/STRB, unsigned offset (scaled by the size); 31 is SP as base, XZR/WZR as value
      {"str x1, [x2]", 0xf9000041, 8, x1, x2},
      {"str x1, [x2, #32760]", 0xf93ffc41, 8, x1, x2 + 32760},
      {"str w1, [x2, #16]", 0xb9001041, 4, w1, x2 + 16},
      {"strh w1, [x2, #4094]", 0x791ffc41, 2, h1, x2 + 4094},
      {"strb w1, [x2, #4095]", 0x393ffc41, 1, b1, x2 + 4095},
      {"str x1, [sp, #8]", 0xf90007e1, 8, x1, kSp + 8},
      {"str xzr, [x2]", 0xf900005f, 8, 0, x2},
      {"str wzr, [x2, #4]", 0xb900045f, 4, 0, x2 + 4},
      {"str x30, [x29, #16]", 0xf9000bbe, 8, X(30), X(29) + 16},
      {"str w0, [x0]", 0xb9000000, 4, Low(X(0), 4), X(0)},
      // pre- and post-index: the base is written back
      Writeback({"str x1, [x2, #-8]!", 0xf81f8c41, 8, x1, x2 - 8}, 2, x2 - 8),
      Writeback({"str x1, [x2], #255", 0xf80ff441, 8, x1, x2}, 2, x2 + 255),
      Writeback({"str w1, [x2, #255]!", 0xb80ffc41, 4, w1, x2 + 255}, 2, x2 + 255),
      Writeback({"str w1, [x2], #-256", 0xb8100441, 4, w1, x2}, 2, x2 - 256),
      Writeback({"strh w1, [x2, #2]!", 0x78002c41, 2, h1, x2 + 2}, 2, x2 + 2),
      Writeback({"strb w1, [x2], #1", 0x38001441, 1, b1, x2}, 2, x2 + 1),
      Writeback({"str x1, [sp, #-16]!", 0xf81f0fe1, 8, x1, kSp - 16}, 31, kSp - 16),
      // register offset: LSL, UXTW, SXTW, SXTX; shifted by the size when S
      {"str x1, [x2, x3]", 0xf8236841, 8, x1, x2 + kX3},
      {"str x1, [x2, x3, lsl #3]", 0xf8237841, 8, x1, x2 + (kX3 << 3)},
      {"str x1, [x2, w3, uxtw]", 0xf8234841, 8, x1, x2 + kW3Unsigned},
      {"str x1, [x2, w3, uxtw #3]", 0xf8235841, 8, x1, x2 + (kW3Unsigned << 3)},
      {"str w1, [x2, w3, sxtw #2]", 0xb823d841, 4, w1, x2 - 64},
      {"str x1, [x2, x3, sxtx #3]", 0xf823f841, 8, x1, x2 + (kX3 << 3)},
      {"strh w1, [x2, w3, sxtw #1]", 0x7823d841, 2, h1, x2 + (kW3Signed << 1)},
      {"strh w1, [x2, x3, lsl #1]", 0x78237841, 2, h1, x2 + (kX3 << 1)},
      {"strb w1, [x2, w3, uxtw]", 0x38234841, 1, b1, x2 + kW3Unsigned},
      {"strb w1, [x2, x3, sxtx]", 0x3823e841, 1, b1, x2 + kX3},
      {"str x1, [x2, xzr]", 0xf83f6841, 8, x1, x2},
      // STUR: unscaled signed 9-bit offset
      {"stur x1, [x2, #-1]", 0xf81ff041, 8, x1, x2 - 1},
      {"stur w1, [x2, #255]", 0xb80ff041, 4, w1, x2 + 255},
      {"sturh w1, [x2, #-256]", 0x78100041, 2, h1, x2 - 256},
      {"sturb w1, [x2, #3]", 0x38003041, 1, b1, x2 + 3},
      // STP/STNP of W and S registers: 8 bytes, the first register in the low half
      {"stp w1, w2, [x3]", 0x29000861, 8, w1w2, kX3},
      {"stp w1, w2, [x3, #-256]", 0x29200861, 8, w1w2, kX3 - 256},
      Writeback({"stp w1, w2, [x3, #8]!", 0x29810861, 8, w1w2, kX3 + 8}, 3, kX3 + 8),
      Writeback({"stp w1, w2, [x3], #252", 0x289f8861, 8, w1w2, kX3}, 3, kX3 + 252),
      {"stnp w1, w2, [x3, #4]", 0x28008861, 8, w1w2, kX3 + 4},
      {"stp w1, wzr, [x3]", 0x29007c61, 8, w1, kX3},
      {"stp s1, s2, [x3, #4]", 0x2d008861, 8, s1s2, kX3 + 4},
      Writeback({"stp s1, s2, [x3], #-8", 0x2cbf0861, 8, s1s2, kX3}, 3, kX3 - 8),
      // STP/STNP of X and D registers: 16 bytes (the trap refuses them)
      High({"stp x1, x2, [x3]", 0xa9000861, 16, x1, kX3}, x2),
      Writeback(High({"stp x1, x2, [sp, #-16]!", 0xa9bf0be1, 16, x1, kSp - 16}, x2), 31, kSp - 16),
      High({"stnp x1, x2, [x3, #16]", 0xa8010861, 16, x1, kX3 + 16}, x2),
      High({"stp d1, d2, [x3]", 0x6d000861, 16, VLo(1), kX3}, VLo(2)),
      Writeback(High({"stp d1, d2, [sp, #-16]!", 0x6dbf0be1, 16, VLo(1), kSp - 16}, VLo(2)), 31,
                kSp - 16),
      High({"stnp d1, d2, [x3]", 0x6c000861, 16, VLo(1), kX3}, VLo(2)),
      // STLR (release, what compilers emit for release and seq_cst stores) and STLUR (FEAT_LRCPC2:
      // gcc -mcpu=neoverse-n2 for a release store at an offset)
      {"stlr x1, [x2]", 0xc89ffc41, 8, x1, x2},
      {"stlr w1, [x2]", 0x889ffc41, 4, w1, x2},
      {"stlrh w1, [x2]", 0x489ffc41, 2, h1, x2},
      {"stlrb w1, [sp]", 0x089fffe1, 1, b1, kSp},
      {"stlr x1, [x2] (Rs 11110: should-be-one, ignored)", 0xc89efc41, 8, x1, x2},
      {"stlur x1, [x2, #-8]", 0xd91f8041, 8, x1, x2 - 8},
      {"stlur w1, [x2, #16]", 0x99010041, 4, w1, x2 + 16},
      {"stlurh w1, [x2, #2]", 0x59002041, 2, h1, x2 + 2},
      {"stlurb w1, [x2, #-1]", 0x191ff041, 1, b1, x2 - 1},
      {"stlur wzr, [x2]", 0x9900005f, 4, 0, x2},
      // store-exclusive (the ldaxr/stlxr loops of -march=armv8-a atomics): Ws must read 0
      Status({"stxr w4, x1, [x2]", 0xc8047c41, 8, x1, x2}, 4),
      Status({"stlxr w4, w1, [x2]", 0x8804fc41, 4, w1, x2}, 4),
      Status({"stxr wzr, x1, [x2]", 0xc81f7c41, 8, x1, x2}, 31),
      Status({"stxrh w4, w1, [x2]", 0x48047c41, 2, h1, x2}, 4),
      Status({"stlxrb w4, w1, [sp]", 0x0804ffe1, 1, b1, kSp}, 4),
      Status({"stxr w4, x1, [x2] (Rt2 11110: should-be-one, ignored)", 0xc8047841, 8, x1, x2}, 4),
      Status({"stxp w4, w1, w2, [x3]", 0x88240861, 8, w1w2, kX3}, 4),
      Status({"stlxp w4, w1, w2, [x3]", 0x88248861, 8, w1w2, kX3}, 4),
      Status(High({"stlxp w4, x1, x2, [x3]", 0xc8248861, 16, x1, kX3}, x2), 4),
      // SWP (FEAT_LSE: libgcc's __aarch64_swp*_acq_rel on an LSE CPU, clang for -mcpu with LSE):
      // stores Rs, loads the old value into Rt
      Exchange({"swp x1, x5, [x2]", 0xf8218045, 8, x1, x2}, 5),
      Exchange({"swpal x1, x5, [x2]", 0xf8e18045, 8, x1, x2}, 5),
      Exchange({"swpl w1, w5, [x2]", 0xb8618045, 4, w1, x2}, 5),
      Exchange({"swpa w1, w5, [x2]", 0xb8a18045, 4, w1, x2}, 5),
      Exchange({"swph w1, w5, [x2]", 0x78218045, 2, h1, x2}, 5),
      Exchange({"swpalh w1, w5, [x2]", 0x78e18045, 2, h1, x2}, 5),
      Exchange({"swpb w1, w5, [x2]", 0x38218045, 1, b1, x2}, 5),
      Exchange({"swpalb w1, w5, [x2]", 0x38e18045, 1, b1, x2}, 5),
      Exchange({"swp xzr, xzr, [x2]", 0xf83f805f, 8, 0, x2}, 31),
      Exchange({"swpal x1, x0, [x0]", 0xf8e18000, 8, x1, X(0)}, 0),
      // SIMD&FP STR/STUR: B/H/S/D from the low end of Vt, Q all 16 bytes
      {"str b1, [x2]", 0x3d000041, 1, Low(VLo(1), 1), x2},
      {"str h1, [x2, #2]", 0x7d000441, 2, Low(VLo(1), 2), x2 + 2},
      {"str s1, [x2, #4]", 0xbd000441, 4, Low(VLo(1), 4), x2 + 4},
      {"str d1, [x2, #8]", 0xfd000441, 8, VLo(1), x2 + 8},
      High({"str q1, [x2, #16]", 0x3d800441, 16, VLo(1), x2 + 16}, VHi(1)),
      Writeback({"str d1, [x2, #-8]!", 0xfc1f8c41, 8, VLo(1), x2 - 8}, 2, x2 - 8),
      Writeback({"str s1, [x2], #4", 0xbc004441, 4, Low(VLo(1), 4), x2}, 2, x2 + 4),
      Writeback({"str s1, [x2, #-4]!", 0xbc1fcc41, 4, Low(VLo(1), 4), x2 - 4}, 2, x2 - 4),
      {"str d1, [x2, x3, lsl #3]", 0xfc237841, 8, VLo(1), x2 + (kX3 << 3)},
      {"str h1, [x2, w3, uxtw #1]", 0x7c235841, 2, Low(VLo(1), 2), x2 + (kW3Unsigned << 1)},
      {"str b1, [x2, x3]", 0x3c236841, 1, Low(VLo(1), 1), x2 + kX3},
      High({"str q1, [x2, x3, lsl #4]", 0x3ca37841, 16, VLo(1), x2 + (kX3 << 4)}, VHi(1)),
      {"stur d1, [x2, #-3]", 0xfc1fd041, 8, VLo(1), x2 - 3},
      {"stur h1, [x2, #-2]", 0x7c1fe041, 2, Low(VLo(1), 2), x2 - 2},
      {"stur b1, [x2, #1]", 0x3c001041, 1, Low(VLo(1), 1), x2 + 1},
      High({"stur q1, [x2, #1]", 0x3c801041, 16, VLo(1), x2 + 1}, VHi(1)),
      {"str d31, [x2]", 0xfd00005f, 8, VLo(31), x2},
      Writeback(High({"str q31, [sp, #-32]!", 0x3c9e0fff, 16, VLo(31), kSp - 32}, VHi(31)), 31,
                kSp - 32),
      // ST1 of one lane (vst1q_lane_*), no offset or post-index by the lane size or by Xm
      {"st1 {v1.d}[1], [x2]", 0x4d008441, 8, VHi(1), x2},
      Writeback({"st1 {v1.d}[0], [x2], #8", 0x0d9f8441, 8, VLo(1), x2}, 2, x2 + 8),
      Writeback({"st1 {v1.s}[3], [x2], x3", 0x4d839041, 4, VHi(1) >> 32, x2}, 2, x2 + kX3),
      {"st1 {v1.h}[5], [x2]", 0x4d004841, 2, (VHi(1) >> 16) & 0xFFFF, x2},
      Writeback({"st1 {v1.h}[5], [x2], #2", 0x4d9f4841, 2, (VHi(1) >> 16) & 0xFFFF, x2}, 2, x2 + 2),
      {"st1 {v1.b}[15], [x2]", 0x4d001c41, 1, VHi(1) >> 56, x2},
      Writeback({"st1 {v1.b}[15], [x2], x3", 0x4d831c41, 1, VHi(1) >> 56, x2}, 2, x2 + kX3),
      {"st1 {v31.s}[1], [sp]", 0x0d0093ff, 4, VLo(31) >> 32, kSp},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.text; }

class Arm64StoreDecoderTable : public ::testing::TestWithParam<Case> {};

TEST_P(Arm64StoreDecoderTable, WidthValueAddressAndSideEffects) {
  const Case& c = GetParam();
  DecodedStore out;
  ASSERT_TRUE(decode_store(c.word, Registers(), out)) << c.text;
  EXPECT_EQ(out.width, c.width) << c.text;
  EXPECT_EQ(out.value, c.value) << c.text;
  EXPECT_EQ(out.value_high, c.value_high) << c.text;
  EXPECT_EQ(out.address, c.address) << c.text;
  EXPECT_EQ(out.writeback, c.base >= 0) << c.text;
  if (c.base >= 0) {
    EXPECT_EQ(out.base, c.base) << c.text;
    EXPECT_EQ(out.new_base, c.new_base) << c.text;
  }
  EXPECT_EQ(out.exclusive, c.status >= 0) << c.text;
  if (c.status >= 0) {
    EXPECT_EQ(out.status, c.status) << c.text;
  }
  EXPECT_EQ(out.exchange, c.exchange >= 0) << c.text;
  if (c.exchange >= 0) {
    EXPECT_EQ(out.exchange_reg, c.exchange) << c.text;
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = "n" + std::to_string(info.index) + "_";
  for (const char* p = info.param.text; *p != '\0' && *p != ' '; ++p) {
    if (std::isalnum(static_cast<unsigned char>(*p))) name += *p;
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Forms, Arm64StoreDecoderTable, ::testing::ValuesIn(StoreCases()),
                         CaseName);

struct Rejected {
  const char* text;
  uint32_t word;
};

void PrintTo(const Rejected& r, std::ostream* os) { *os << r.text; }

class Arm64StoreDecoderRejects : public ::testing::TestWithParam<Rejected> {};

TEST_P(Arm64StoreDecoderRejects, NotADecodableStore) {
  const Rejected& r = GetParam();
  DecodedStore out;
  EXPECT_FALSE(decode_store(r.word, Registers(), out)) << r.text;
}

INSTANTIATE_TEST_SUITE_P(
    Forms, Arm64StoreDecoderRejects,
    ::testing::Values(
        // loads and prefetches
        Rejected{"ldr x1, [x2]", 0xf9400041}, Rejected{"ldur x1, [x2, #-8]", 0xf85f8041},
        Rejected{"ldrb w1, [x2, #1]", 0x39400441}, Rejected{"ldrsw x1, [x2]", 0xb9800041},
        Rejected{"ldrsb x1, [x2]", 0x39800041}, Rejected{"ldp x1, x2, [x3]", 0xa9400861},
        Rejected{"ldxr x1, [x2]", 0xc85f7c41}, Rejected{"ldxp x1, x2, [x3]", 0xc87f0861},
        Rejected{"ldaxr w1, [x2]", 0x885ffc41}, Rejected{"ldar x1, [x2]", 0xc8dffc41},
        Rejected{"ldlar x1, [x2]", 0xc8df7c41}, Rejected{"ldapr x1, [x2]", 0xf8bfc041},
        Rejected{"ldapur x1, [x2]", 0xd9400041}, Rejected{"ldr d1, [x2]", 0xfd400041},
        Rejected{"ldr q1, [x2]", 0x3dc00041}, Rejected{"ld1 {v1.d}[1], [x2]", 0x4d408441},
        Rejected{"ldraa x1, [x2]", 0xf8200441}, Rejected{"prfm pldl1keep, [x2]", 0xf9800040},
        Rejected{"prfum pldl1keep, [x2]", 0xf8800040},
        // 32-byte and multi-register SIMD stores
        Rejected{"stp q1, q2, [x3]", 0xad000861}, Rejected{"stp q1, q2, [x3, #32]!", 0xad810861},
        Rejected{"st1 {v1.2d}, [x2]", 0x4c007c41}, Rejected{"st1 {v1.8b}, [x2]", 0x0c007041},
        Rejected{"st2 {v1.d, v2.d}[1], [x2]", 0x4d208441},
        Rejected{"st3 {v1.d-v3.d}[0], [x2]", 0x0d00a441},
        // read-modify-writes other than SWP, compare-and-swap
        Rejected{"ldadd x1, x5, [x2]", 0xf8210045}, Rejected{"ldaddb w0, w1, [x2]", 0x38200041},
        Rejected{"stadd x1, [x2]", 0xf821005f}, Rejected{"cas x1, x5, [x2]", 0xc8a17c45},
        Rejected{"casal x1, x5, [x2]", 0xc8e1fc45},
        Rejected{"casp x0, x1, x4, x5, [x2]", 0x48207c44},
        // stores no compiler emits for user code: LORegions, unprivileged, memory tags, DC ZVA
        Rejected{"stllr x1, [x2]", 0xc89f7c41}, Rejected{"stllrb w1, [x2]", 0x089f7c41},
        Rejected{"sttr x1, [x2]", 0xf8000841}, Rejected{"sttrb w1, [x2]", 0x38000841},
        Rejected{"stgp x1, x2, [x3]", 0x69000861}, Rejected{"stzg x2, [x3]", 0xd9600862},
        Rejected{"dc zva, x2", 0xd50b7422},
        // not memory accesses
        Rejected{"add x1, x2, x3", 0x8b030041}, Rejected{"mov x1, #0x5678", 0xd28acf01},
        Rejected{"nop", 0xd503201f}, Rejected{"b .", 0x14000000}, Rejected{"ret", 0xd65f03c0},
        Rejected{"udf #0", 0x00000000},
        // unallocated: register offset with option 000, ST1 lane of D with S 1 / size 11
        Rejected{".inst 0xf8230841", 0xf8230841}, Rejected{".inst 0x0d009441", 0x0d009441},
        Rejected{".inst 0x0d008c41", 0x0d008c41}));

TEST(Arm64StoreDecoder, SimdRegisterThirtyOneIsV31AndGprThirtyOneIsZero) {
  DecodedStore out;
  ASSERT_TRUE(decode_store(0xfd00005f, Registers(), out));  // str d31, [x2]
  EXPECT_EQ(out.value, VLo(31));
  ASSERT_TRUE(decode_store(0xf900005f, Registers(), out));  // str xzr, [x2]
  EXPECT_EQ(out.value, 0u);
}

TEST(Arm64StoreDecoder, EveryAcceptedWordIsSane) {
  // A sweep of pseudo-random words through the load/store space (op0 x1x0): whatever is accepted
  // has a legal width, and nothing reads outside the register file (the ASan build checks).
  uint64_t state = 0x9E3779B97F4A7C15ull;
  unsigned accepted = 0;
  const RegisterFile regs = Registers();
  for (unsigned i = 0; i < (1u << 20); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t word = (static_cast<uint32_t>(state >> 32) & ~(1u << 25)) | (1u << 27);
    DecodedStore out;
    if (!decode_store(word, regs, out)) continue;
    ++accepted;
    ASSERT_TRUE(out.width == 1 || out.width == 2 || out.width == 4 || out.width == 8 ||
                out.width == 16)
        << std::hex << word;
    ASSERT_TRUE(out.width == 16 || out.value_high == 0) << std::hex << word;
    ASSERT_TRUE(out.base <= 31 && out.status <= 31 && out.exchange_reg <= 31) << std::hex << word;
  }
  EXPECT_GT(accepted, 1000u);
}

}  // namespace
}  // namespace mana::emu::doorbell::arm64
