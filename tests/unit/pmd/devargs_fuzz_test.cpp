// SPDX-License-Identifier: BSD-3-Clause
// Fuzzing parse_devargs: random bytes, strings of its grammar's tokens (repeated keys, 9+ MACs,
// bad MACs), random edits of valid devargs, very long ones. Never a crash; every rejection is one
// line within the driver's 256-byte error buffer that still says what is expected; every accepted
// input formats back to devargs that parse to the same MACs.
#include <rte_ether.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "../fuzz/fuzz_input.h"
#include "devargs.h"

namespace {

using mana::fuzz::FuzzInput;

const uint32_t kSeed = mana::fuzz::seed_or_env(20261124);
const unsigned kIterations = mana::fuzz::iterations();
constexpr size_t kErrorBuffer = 256;  // what probe.cpp gives parse_devargs

const std::vector<std::string> kTokens = {"mac=",
                                          "mac",
                                          "=",
                                          ",",
                                          ":",
                                          "-",
                                          "00",
                                          "0d",
                                          "3a",
                                          "ff",
                                          "FF",
                                          "01",
                                          "zz",
                                          "0",
                                          "1234",
                                          "00:0d:3a:00:00:01",
                                          "02:00:00:00:00:02",
                                          "00:0D:3A:00:00:01",
                                          "queues=",
                                          " ",
                                          "\n",
                                          "\"",
                                          "%s",
                                          "mac=00:0d:3a:76:3b:d0",
                                          "=mac",
                                          ",,",
                                          "[",
                                          "]",
                                          "mac=aa:bb:cc:dd:ee:ff:00"};

// The hints the driver's errors give (doc/guide.md, devargs).
bool says_what_is_expected(const std::string& error) {
  for (const char* hint :
       {mana::kDevargsHelp, "expected xx:xx:xx:xx:xx:xx", "at most 8 ports", "give each port once"})
    if (error.find(hint) != std::string::npos) return true;
  return false;
}

std::string format_devargs(const mana::Devargs& d) {
  std::string s;
  for (unsigned i = 0; i < d.mac_count; i++) {
    char mac[RTE_ETHER_ADDR_FMT_SIZE];
    rte_ether_format_addr(mac, sizeof(mac), &d.macs[i]);
    s += (i ? ",mac=" : "mac=") + std::string(mac);
  }
  return s;
}

void check(const std::string& args, unsigned iteration) {
  SCOPED_TRACE("seed " + std::to_string(kSeed) + " iteration " + std::to_string(iteration));
  mana::Devargs d;
  char error[kErrorBuffer];
  const int rc = mana::parse_devargs(args.c_str(), d, error, sizeof(error));
  const std::string e = error;
  if (rc != 0) {
    ASSERT_EQ(rc, -EINVAL);
    ASSERT_TRUE(mana::fuzz::one_line(e)) << "'" << e << "' for '" << args << "'";
    ASSERT_LT(e.size(), kErrorBuffer - 1) << "cut: " << e;
    ASSERT_TRUE(says_what_is_expected(e)) << "no hint in '" << e << "' for '" << args << "'";
    ASSERT_EQ(d.mac_count, 0u);
    return;
  }
  ASSERT_EQ(e, "");
  ASSERT_LE(d.mac_count, mana::kMaxMacDevargs);
  const std::string again = format_devargs(d);
  mana::Devargs d2;
  ASSERT_EQ(mana::parse_devargs(again.c_str(), d2, error, sizeof(error)), 0) << error;
  ASSERT_EQ(d2.mac_count, d.mac_count) << again;
  for (unsigned i = 0; i < d.mac_count; i++)
    ASSERT_TRUE(rte_is_same_ether_addr(&d.macs[i], &d2.macs[i])) << again;
}

TEST(DevargsFuzz, NoCrashEveryRejectionSaysWhatIsExpectedAndAcceptedOnesRoundTrip) {
  FuzzInput in(kSeed);
  const std::string valid = "mac=00:0d:3a:00:00:01,mac=00:0d:3a:00:00:02";
  unsigned accepted = 0;
  for (unsigned i = 0; i < kIterations; i++) {
    std::string args;
    switch (i % 4) {
      case 0:
        args = in.bytes(64);
        break;
      case 1:
        args = in.tokens(kTokens, 1 + in.below(24));
        break;
      case 2:
        args = in.mutate(valid, 1 + in.below(4), kTokens);
        break;
      default:
        args = in.tokens(kTokens, 100 + in.below(400));
        break;  // hundreds of characters
    }
    check(args, i);
    if (testing::Test::HasFatalFailure()) return;
    mana::Devargs d;
    char error[kErrorBuffer];
    accepted += mana::parse_devargs(args.c_str(), d, error, sizeof(error)) == 0;
  }
  std::printf("devargs fuzz: %u inputs (seed %u), %u accepted\n", kIterations, kSeed, accepted);
}

// The finding "devargs over 256 characters lose their hint": the reason and the hint come first,
// the user's text is quoted last and cut, so the line says what is wrong whatever the length.
TEST(DevargsFuzz, LongDevargsKeepTheirHint) {
  const std::string padding(400, 'x');
  struct Case {
    std::string args;
    const char* hint;
  };
  for (const Case& c : {Case{"mac=00:0d:3a:00:00:01,queues=" + padding, mana::kDevargsHelp},
                        Case{"mac=" + padding, "expected xx:xx:xx:xx:xx:xx"},
                        Case{padding + "=1", mana::kDevargsHelp}}) {
    mana::Devargs d;
    char error[kErrorBuffer];
    EXPECT_EQ(mana::parse_devargs(c.args.c_str(), d, error, sizeof(error)), -EINVAL);
    const std::string e = error;
    EXPECT_NE(e.find(c.hint), std::string::npos) << e;
    EXPECT_NE(e.find(" characters)"), std::string::npos) << "the quote is not cut: " << e;
    EXPECT_LT(e.size(), kErrorBuffer - 1) << e;
  }
}

}  // namespace
