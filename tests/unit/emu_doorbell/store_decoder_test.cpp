// SPDX-License-Identifier: BSD-3-Clause
// Decoder table tests: each row is one hand-encoded instruction (checked with
// `objdump -D -b binary -mi386:x86-64` when written; the AT&T text is in the first column).
#include "doorbell/store_decoder.h"

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

namespace mana::emu::doorbell {
namespace {

// Register i holds bytes (i << 4) | k at byte k: every byte of every register differs.
uint64_t R(unsigned i) {
  uint64_t v = 0;
  for (unsigned k = 0; k < 8; ++k) v |= uint64_t{(i << 4) | k} << (8 * k);
  return v;
}
uint64_t XmmLo(unsigned i) { return 0xA000000000000000ull | (uint64_t{i} << 40) | 0x0123456789ull; }
uint64_t XmmHi(unsigned i) { return 0xB000000000000000ull | (uint64_t{i} << 40) | 0x0fedcba987ull; }
constexpr uint64_t kRip = 0x7f0000001000ull;

RegisterFile Registers() {
  RegisterFile regs;
  for (unsigned i = 0; i < 16; ++i) {
    regs.gpr[i] = R(i);
    regs.xmm[i] = {XmmLo(i), XmmHi(i)};
  }
  regs.rip = kRip;
  return regs;
}

uint64_t Low(uint64_t v, unsigned bytes) {
  return bytes == 8 ? v : v & ((1ull << (8 * bytes)) - 1);
}

struct Case {
  const char* text;  // objdump's disassembly
  std::vector<uint8_t> bytes;
  unsigned width;
  uint64_t value;
  uint64_t address;
  bool segment = false;
};

std::vector<Case> StoreCases() {
  const uint64_t rax = R(kRax), rdi = R(kRdi);
  return {
      // mov r/m, r: operand sizes, high-byte registers, REX
      {"mov %rax,(%rdi)", {0x48, 0x89, 0x07}, 8, rax, rdi},
      {"mov %eax,(%rdi)", {0x89, 0x07}, 4, Low(rax, 4), rdi},
      {"mov %ax,(%rdi)", {0x66, 0x89, 0x07}, 2, Low(rax, 2), rdi},
      {"mov %al,(%rdi)", {0x88, 0x07}, 1, Low(rax, 1), rdi},
      {"mov %ah,(%rdi)", {0x88, 0x27}, 1, (rax >> 8) & 0xFF, rdi},
      {"mov %sil,(%rdi)", {0x40, 0x88, 0x37}, 1, Low(R(kRsi), 1), rdi},
      {"mov %dh,(%rdi)", {0x88, 0x37}, 1, (R(kRdx) >> 8) & 0xFF, rdi},
      {"mov %r8,(%rdi)", {0x4c, 0x89, 0x07}, 8, R(kR8), rdi},
      {"mov %rax,(%r8)", {0x49, 0x89, 0x00}, 8, rax, R(kR8)},
      {"mov %r15,(%r15)", {0x4d, 0x89, 0x3f}, 8, R(kR15), R(kR15)},
      // ModRM / SIB / displacement forms
      {"mov %rax,(%rsp)", {0x48, 0x89, 0x04, 0x24}, 8, rax, R(kRsp)},
      {"mov %rax,0x0(%rbp)", {0x48, 0x89, 0x45, 0x00}, 8, rax, R(kRbp)},
      {"mov %rax,0x0(%r13)", {0x49, 0x89, 0x45, 0x00}, 8, rax, R(kR13)},
      {"mov %rax,-0x8(%rdi)", {0x48, 0x89, 0x47, 0xf8}, 8, rax, rdi - 8},
      {"mov %rax,0x800(%rdi)", {0x48, 0x89, 0x87, 0x00, 0x08, 0x00, 0x00}, 8, rax, rdi + 0x800},
      {"mov %rax,0x10(%rip)", {0x48, 0x89, 0x05, 0x10, 0x00, 0x00, 0x00}, 8, rax, kRip + 7 + 0x10},
      {"mov %rax,(%rbx,%rsi,4)", {0x48, 0x89, 0x04, 0xb3}, 8, rax, R(kRbx) + R(kRsi) * 4},
      {"mov %rax,0x1000", {0x48, 0x89, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00}, 8, rax, 0x1000},
      {"mov %rax,0x8(,%rsi,8)",
       {0x48, 0x89, 0x04, 0xf5, 0x08, 0x00, 0x00, 0x00},
       8,
       rax,
       R(kRsi) * 8 + 8},
      {"mov %rax,(%rdi,%r12,8)", {0x4a, 0x89, 0x04, 0xe7}, 8, rax, rdi + R(kR12) * 8},
      {"mov %rax,0x10(%rsp)", {0x48, 0x89, 0x44, 0x24, 0x10}, 8, rax, R(kRsp) + 0x10},
      {"mov %rax,0x400(%r13,%r15,8)",
       {0x4b, 0x89, 0x84, 0xfd, 0x00, 0x04, 0x00, 0x00},
       8,
       rax,
       R(kR13) + R(kR15) * 8 + 0x400},
      // mov r/m, imm
      {"movq $0x12345678,(%rdi)", {0x48, 0xc7, 0x07, 0x78, 0x56, 0x34, 0x12}, 8, 0x12345678, rdi},
      {"movq $0xffffffffffffffff,(%rdi)",
       {0x48, 0xc7, 0x07, 0xff, 0xff, 0xff, 0xff},
       8,
       ~0ull,
       rdi},
      {"movl $0xffffffff,(%rdi)", {0xc7, 0x07, 0xff, 0xff, 0xff, 0xff}, 4, 0xffffffffull, rdi},
      {"movw $0x1234,(%rdi)", {0x66, 0xc7, 0x07, 0x34, 0x12}, 2, 0x1234, rdi},
      {"movb $0xab,(%rdi)", {0xc6, 0x07, 0xab}, 1, 0xab, rdi},
      {"movl $0x12345678,0x410(%rdi)",
       {0xc7, 0x87, 0x10, 0x04, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12},
       4,
       0x12345678,
       rdi + 0x410},
      {"movq $0x1,-0x10(%rip)",
       {0x48, 0xc7, 0x05, 0xf0, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00},
       8,
       1,
       kRip + 11 - 0x10},
      // mov moffs, accumulator
      {"movabs %rax,0x1122334455667788",
       {0x48, 0xa3, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11},
       8,
       rax,
       0x1122334455667788ull},
      {"movabs %al,0x100000000008",
       {0xa2, 0x08, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00},
       1,
       Low(rax, 1),
       0x100000000008ull},
      // movnti
      {"movnti %rax,(%rdi)", {0x48, 0x0f, 0xc3, 0x07}, 8, rax, rdi},
      {"movnti %eax,(%rdi)", {0x0f, 0xc3, 0x07}, 4, Low(rax, 4), rdi},
      {"movnti %r15,(%rdi)", {0x4c, 0x0f, 0xc3, 0x3f}, 8, R(kR15), rdi},
      // SSE stores of the low (or high) quadword
      {"movq %xmm0,(%rdi)", {0x66, 0x0f, 0xd6, 0x07}, 8, XmmLo(0), rdi},
      {"movq %xmm15,(%rdi)", {0x66, 0x44, 0x0f, 0xd6, 0x3f}, 8, XmmLo(15), rdi},
      {"movd %xmm0,(%rdi)", {0x66, 0x0f, 0x7e, 0x07}, 4, Low(XmmLo(0), 4), rdi},
      {"movq %xmm0,(%rdi) [REX.W 7E]", {0x66, 0x48, 0x0f, 0x7e, 0x07}, 8, XmmLo(0), rdi},
      {"movsd %xmm0,(%rdi)", {0xf2, 0x0f, 0x11, 0x07}, 8, XmmLo(0), rdi},
      {"movsd %xmm1,0x8(%r13)", {0xf2, 0x41, 0x0f, 0x11, 0x4d, 0x08}, 8, XmmLo(1), R(kR13) + 8},
      {"movss %xmm0,(%rdi)", {0xf3, 0x0f, 0x11, 0x07}, 4, Low(XmmLo(0), 4), rdi},
      {"movlps %xmm0,(%rdi)", {0x0f, 0x13, 0x07}, 8, XmmLo(0), rdi},
      {"movlpd %xmm0,(%rdi)", {0x66, 0x0f, 0x13, 0x07}, 8, XmmLo(0), rdi},
      {"movhps %xmm0,(%rdi)", {0x0f, 0x17, 0x07}, 8, XmmHi(0), rdi},
      {"movhpd %xmm0,(%rdi)", {0x66, 0x0f, 0x17, 0x07}, 8, XmmHi(0), rdi},
      // VEX
      {"vmovq %xmm0,(%rdi)", {0xc5, 0xf9, 0xd6, 0x07}, 8, XmmLo(0), rdi},
      {"vmovq %xmm15,(%rdi)", {0xc5, 0x79, 0xd6, 0x3f}, 8, XmmLo(15), rdi},
      {"vmovd %xmm0,(%rdi)", {0xc5, 0xf9, 0x7e, 0x07}, 4, Low(XmmLo(0), 4), rdi},
      {"vmovq %xmm0,(%rdi) [VEX.W1 7E]", {0xc4, 0xe1, 0xf9, 0x7e, 0x07}, 8, XmmLo(0), rdi},
      {"vmovq %xmm0,(%r15) [3-byte VEX]", {0xc4, 0xc1, 0x79, 0xd6, 0x07}, 8, XmmLo(0), R(kR15)},
      {"vmovsd %xmm0,(%rdi)", {0xc5, 0xfb, 0x11, 0x07}, 8, XmmLo(0), rdi},
      {"vmovss %xmm0,(%rdi)", {0xc5, 0xfa, 0x11, 0x07}, 4, Low(XmmLo(0), 4), rdi},
      {"vmovlps %xmm0,(%rdi)", {0xc5, 0xf8, 0x13, 0x07}, 8, XmmLo(0), rdi},
      {"vmovlpd %xmm0,(%rdi)", {0xc5, 0xf9, 0x13, 0x07}, 8, XmmLo(0), rdi},
      {"vmovhps %xmm0,(%rdi)", {0xc5, 0xf8, 0x17, 0x07}, 8, XmmHi(0), rdi},
      // prefixes
      {"ds mov %rax,(%rdi)", {0x3e, 0x48, 0x89, 0x07}, 8, rax, rdi},
      {"mov %rax,%fs:(%rdi)", {0x64, 0x48, 0x89, 0x07}, 8, rax, rdi, true},
      {"mov %eax,%gs:(%rdi)", {0x65, 0x89, 0x07}, 4, Low(rax, 4), rdi, true},
      {"mov %rax,(%edi)", {0x67, 0x48, 0x89, 0x07}, 8, rax, Low(rdi, 4)},
      {"mov %rax,0x10(%eip)",
       {0x67, 0x48, 0x89, 0x05, 0x10, 0x00, 0x00, 0x00},
       8,
       rax,
       Low(kRip + 8 + 0x10, 4)},
      {"cs movw $0x1234,(%rdi)", {0x2e, 0x66, 0xc7, 0x07, 0x34, 0x12}, 2, 0x1234, rdi},
      {"rex.W (ignored) mov %ax,(%rdi)", {0x48, 0x66, 0x89, 0x07}, 2, Low(rax, 2), rdi},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.text; }

class StoreDecoderTable : public ::testing::TestWithParam<Case> {};

TEST_P(StoreDecoderTable, LengthWidthValueAddress) {
  const Case& c = GetParam();
  // Trailing bytes that would change the result if the decoder read past the instruction.
  std::vector<uint8_t> code = c.bytes;
  code.insert(code.end(), 16, 0xFF);
  const RegisterFile regs = Registers();
  DecodedStore out;
  ASSERT_TRUE(decode_store(code.data(), code.size(), regs, out)) << c.text;
  EXPECT_EQ(out.length, c.bytes.size()) << c.text;
  EXPECT_EQ(out.width, c.width) << c.text;
  EXPECT_EQ(out.value, c.value) << c.text;
  EXPECT_EQ(out.address, c.address) << c.text;
  EXPECT_EQ(out.segment_override, c.segment) << c.text;
}

TEST_P(StoreDecoderTable, ExactlyAvailableBytesSufficeOneLessFails) {
  const Case& c = GetParam();
  const RegisterFile regs = Registers();
  DecodedStore out;
  EXPECT_TRUE(decode_store(c.bytes.data(), c.bytes.size(), regs, out)) << c.text;
  EXPECT_FALSE(decode_store(c.bytes.data(), c.bytes.size() - 1, regs, out)) << c.text;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = "n" + std::to_string(info.index) + "_";
  for (const char* p = info.param.text; *p != '\0' && *p != ' '; ++p) {
    if (std::isalnum(static_cast<unsigned char>(*p))) name += *p;
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Forms, StoreDecoderTable, ::testing::ValuesIn(StoreCases()), CaseName);

struct Rejected {
  const char* text;
  std::vector<uint8_t> bytes;
};

void PrintTo(const Rejected& r, std::ostream* os) { *os << r.text; }

class StoreDecoderRejects : public ::testing::TestWithParam<Rejected> {};

TEST_P(StoreDecoderRejects, NotADecodableStore) {
  const Rejected& r = GetParam();
  DecodedStore out;
  EXPECT_FALSE(decode_store(r.bytes.data(), r.bytes.size(), Registers(), out)) << r.text;
}

INSTANTIATE_TEST_SUITE_P(
    Forms, StoreDecoderRejects,
    ::testing::Values(Rejected{"mov (%rdi),%rax (load)", {0x48, 0x8b, 0x07}},
                      Rejected{"mov %rax,%rdi (register)", {0x48, 0x89, 0xc7}},
                      Rejected{"movq (%rdi),%xmm0 (load)", {0xf3, 0x0f, 0x7e, 0x07}},
                      Rejected{"movd %mm0,(%rdi) (MMX)", {0x0f, 0x7e, 0x07}},
                      Rejected{"movups %xmm0,(%rdi) (16 bytes)", {0x0f, 0x11, 0x07}},
                      Rejected{"movupd %xmm0,(%rdi) (16 bytes)", {0x66, 0x0f, 0x11, 0x07}},
                      Rejected{"mov $imm,%eax (register)", {0xc7, 0xc0, 0x01, 0x00, 0x00, 0x00}},
                      Rejected{"c7 /1 (not mov)", {0xc7, 0x0f, 0x01, 0x00, 0x00, 0x00}},
                      Rejected{"lock xadd %rax,(%rdi)", {0xf0, 0x48, 0x0f, 0xc1, 0x07}},
                      Rejected{"EVEX vmovq", {0x62, 0xf1, 0xfd, 0x08, 0xd6, 0x07}},
                      Rejected{"VEX map 0F38", {0xc4, 0xe2, 0x79, 0xd6, 0x07}},
                      Rejected{"66 before VEX", {0x66, 0xc5, 0xf9, 0xd6, 0x07}},
                      Rejected{"vmovups (16 bytes)", {0xc5, 0xf8, 0x11, 0x07}},
                      Rejected{"empty", {}}));

struct Exchange {
  const char* text;
  std::vector<uint8_t> bytes;
  unsigned width;
  uint64_t value;
  uint8_t gpr;
  bool high_byte;
};

void PrintTo(const Exchange& x, std::ostream* os) { *os << x.text; }

class StoreDecoderExchange : public ::testing::TestWithParam<Exchange> {};

TEST_P(StoreDecoderExchange, StoresTheRegisterAndNamesItForTheLoad) {
  const Exchange& x = GetParam();
  DecodedStore out;
  ASSERT_TRUE(decode_store(x.bytes.data(), x.bytes.size(), Registers(), out)) << x.text;
  EXPECT_EQ(out.length, x.bytes.size()) << x.text;
  EXPECT_EQ(out.width, x.width) << x.text;
  EXPECT_EQ(out.value, x.value) << x.text;
  EXPECT_EQ(out.address, R(kRdi)) << x.text;
  EXPECT_TRUE(out.exchange) << x.text;
  EXPECT_EQ(out.exchange_gpr, x.gpr) << x.text;
  EXPECT_EQ(out.exchange_high_byte, x.high_byte) << x.text;
}

INSTANTIATE_TEST_SUITE_P(
    Forms, StoreDecoderExchange,
    ::testing::Values(
        Exchange{"xchg %rax,(%rdi)", {0x48, 0x87, 0x07}, 8, R(kRax), kRax, false},
        Exchange{"xchg %esi,(%rdi)", {0x87, 0x37}, 4, Low(R(kRsi), 4), kRsi, false},
        Exchange{"xchg %ax,(%rdi)", {0x66, 0x87, 0x07}, 2, Low(R(kRax), 2), kRax, false},
        Exchange{"xchg %ah,(%rdi)", {0x86, 0x27}, 1, (R(kRax) >> 8) & 0xFF, kRax, true},
        Exchange{"xchg %sil,(%rdi)", {0x40, 0x86, 0x37}, 1, Low(R(kRsi), 1), kRsi, false}));

TEST(StoreDecoder, PlainStoresAreNoExchange) {
  const uint8_t mov[] = {0x48, 0x89, 0x07};
  DecodedStore out;
  ASSERT_TRUE(decode_store(mov, sizeof mov, Registers(), out));
  EXPECT_FALSE(out.exchange);
}

TEST(StoreDecoder, NeverReadsPastFifteenBytes) {
  // 14 prefixes + opcode + ModRM = 16 bytes: longer than any legal instruction.
  // (built whole: g++ 16 warns falsely on push_back into a vector of 14)
  std::vector<uint8_t> code(16, 0x66);
  code[14] = 0x89;
  code[15] = 0x07;
  DecodedStore out;
  EXPECT_FALSE(decode_store(code.data(), code.size(), Registers(), out));
  // 13 prefixes: exactly 15 bytes, legal.
  code.erase(code.begin());
  ASSERT_TRUE(decode_store(code.data(), code.size(), Registers(), out));
  EXPECT_EQ(out.length, 15);
  EXPECT_EQ(out.width, 2);
}

}  // namespace
}  // namespace mana::emu::doorbell
