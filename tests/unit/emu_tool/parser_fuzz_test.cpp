// SPDX-License-Identifier: BSD-3-Clause
// Fuzzing mana-emu's text parsers: the config file (parse_config, with its hw record through
// set_hw_option), `--hw KEY=VALUE` alone, and the control channel's command lines. Inputs are
// random bytes, strings of each grammar's tokens and random edits of valid inputs, from fixed
// seeds (MANA_FUZZ_SEED and MANA_FUZZ_SCALE override them, see fuzz_input.h). Never a crash (and
// nothing for ASan/UBSan to find); every rejection is one line (config errors name the line); every
// accepted input is a fixed point of format(parse(x)).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../fuzz/fuzz_input.h"
#include "config/config.h"
#include "config/hw_options.h"
#include "control/control_command.h"
#include "control/control_command_format.h"

namespace mana::emu {
namespace {

using fuzz::FuzzInput;
const unsigned kIterations = fuzz::iterations();
using fuzz::one_line;

// Inputs of one fuzz run, cycling through the four kinds.
std::string next_input(FuzzInput& in, unsigned i, const std::vector<std::string>& tokens,
                       const std::vector<std::string>& valid) {
  switch (i % 4) {
    case 0:
      return in.bytes(96);
    case 1:
      return in.tokens(tokens, 1 + in.below(40));
    case 2:
      return in.mutate(valid[in.below(static_cast<uint32_t>(valid.size()))], 1 + in.below(3),
                       tokens);
    default:
      return in.mutate(valid[in.below(static_cast<uint32_t>(valid.size()))], 1, tokens);
  }
}

// ---- config file

const std::vector<std::string> kConfigTokens = {"\n",
                                                " ",
                                                "\t",
                                                "#",
                                                "=",
                                                "root=",
                                                "/r",
                                                "doorbell=",
                                                "trap",
                                                "poll",
                                                "control=",
                                                "device_split=",
                                                "0",
                                                "1",
                                                "2",
                                                "limits=",
                                                "6.2",
                                                "2025",
                                                "device_cpu=",
                                                "99",
                                                "-1",
                                                "hw",
                                                "raw-qp-first=on",
                                                "hash-type=mask",
                                                "zero-length-cqe=",
                                                "cq-doorbell=stall",
                                                "vport-offset=",
                                                "4001",
                                                "libmana-max-wr=0",
                                                "vf",
                                                "pci=",
                                                "7870:00:00.0",
                                                "7870:00:01.0",
                                                "ffff:ff:1f.7",
                                                "coalesce=",
                                                "anti_spoof=",
                                                "port",
                                                "mac=",
                                                "00:0d:3a:00:00:01",
                                                "00:0d:3a:00:00:02",
                                                "01:00:5e:00:00:01",
                                                "00:00:00:00:00:00",
                                                "ifname=",
                                                "eth1",
                                                "eth2",
                                                "up=",
                                                "wire=",
                                                "loop",
                                                "pair",
                                                "null",
                                                "tap:",
                                                "tap0",
                                                "shm:",
                                                "link",
                                                "x=y",
                                                "4294967296",
                                                "\r"};

std::vector<std::string> valid_configs() {
  return {
      "root=/tmp/r\nvf pci=7870:00:00.0\nport mac=00:0d:3a:00:00:01 ifname=eth1\n",
      "root=/r\ndoorbell=poll\ncontrol=/r/c.sock\ndevice_split=1\nlimits=2025\ndevice_cpu=1\n"
      "hw raw-qp-first=off cq-doorbell=error vport-offset=300\n"
      "vf pci=7870:00:00.0 coalesce=1 anti_spoof=1\n"
      "port mac=00:0d:3a:00:00:01 ifname=eth1 up=1 wire=pair\n"
      "port mac=00:0d:3a:00:00:02 ifname=eth2 wire=pair\n"
      "vf pci=7870:00:01.0\nport mac=02:aa:bb:cc:dd:ee ifname=t0 wire=tap:tap0\n"
      "port mac=02:aa:bb:cc:dd:ef ifname=s0 wire=shm:link\n",
  };
}

TEST(ParserFuzz, ConfigFile) {
  const uint32_t kSeed = fuzz::seed_or_env(1124);
  FuzzInput in(kSeed);
  const std::vector<std::string> valid = valid_configs();
  unsigned accepted = 0;
  for (unsigned i = 0; i < kIterations; ++i) {
    const std::string text = next_input(in, i, kConfigTokens, valid);
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " iteration " + std::to_string(i));
    EmuConfig c;
    std::string error;
    if (!parse_config(text, "cfg", &c, &error)) {
      ASSERT_TRUE(one_line(error)) << "'" << error << "' for:\n" << text;
      ASSERT_EQ(error.rfind("cfg:", 0), 0u) << error;
      continue;
    }
    ++accepted;
    const std::string formatted = format_config(c);
    EmuConfig again;
    ASSERT_TRUE(parse_config(formatted, "formatted", &again, &error))
        << error << "\nfor the format of:\n"
        << text << "\nwhich is:\n"
        << formatted;
    ASSERT_EQ(format_config(again), formatted) << "from:\n" << text;
  }
  std::printf("config fuzz: %u inputs (seed %u), %u accepted\n", kIterations, kSeed, accepted);
  EXPECT_GT(accepted, 0u) << "the mutations never produced a valid config: a weak fuzz test";
}

// ---- --hw KEY=VALUE

TEST(ParserFuzz, HwOption) {
  const uint32_t kSeed = fuzz::seed_or_env(2025);
  FuzzInput in(kSeed);
  std::vector<std::string> tokens = {"=",     "-",      "on",          "off", "0",    "1",
                                     "4000",  "4001",   "99999999999", "bit", "mask", "stall",
                                     "error", "enodev", "ebusy",       " ",   "x"};
  const std::vector<std::string> valid = format_hw_options(HwBehaviour{});
  for (const std::string& kv : valid) tokens.push_back(kv.substr(0, kv.find('=') + 1));
  unsigned accepted = 0;
  for (unsigned i = 0; i < kIterations; ++i) {
    const std::string kv = next_input(in, i, tokens, valid);
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " iteration " + std::to_string(i));
    HwBehaviour hw;
    std::string error;
    if (!set_hw_option(kv, &hw, &error)) {
      ASSERT_TRUE(one_line(error)) << "'" << error << "' for '" << kv << "'";
      continue;
    }
    ++accepted;
    const std::vector<std::string> words = format_hw_options(hw);
    HwBehaviour again;
    for (const std::string& word : words) ASSERT_TRUE(set_hw_option(word, &again, &error)) << error;
    ASSERT_EQ(format_hw_options(again), words) << "from '" << kv << "'";
  }
  std::printf("hw option fuzz: %u inputs (seed %u), %u accepted\n", kIterations, kSeed, accepted);
  EXPECT_GT(accepted, 0u);
}

// ---- control commands

bool same_command(const ControlCommand& a, const ControlCommand& b) {
  if (a.kind != b.kind || a.vf != b.vf) return false;
  if (a.kind == ControlCommand::Kind::kNetdev) return a.port == b.port && a.up == b.up;
  if (a.kind != ControlCommand::Kind::kFault) return true;
  const Fault &f = a.fault, &g = b.fault;
  return a.port == b.port && f.kind == g.kind && f.tx == g.tx && f.port == g.port &&
         f.count == g.count &&
         (f.kind == Fault::Kind::kBadLkey ||
          (f.cqe_type == g.cqe_type && f.skip == g.skip && f.every == g.every));
}

TEST(ParserFuzz, ControlCommand) {
  const uint32_t kSeed = fuzz::seed_or_env(77);
  FuzzInput in(kSeed);
  const std::vector<std::string> tokens = {
      " ",        "  ",       "\t",         "netdev", "remove", "add",       "counters", "live",
      "fault",    "up",       "down",       "tx",     "rx",     "error-cqe", "bad-lkey", "skip",
      "every",    "0",        "1",          "35",     "63",     "64",        "65536",    "65537",
      "16777216", "16777217", "4294967296", "-1",     "0x10",   "+3",        "\r",       "\n"};
  const std::vector<std::string> valid = {"netdev 0 1 up",
                                          "remove 0",
                                          "add 3",
                                          "counters 0",
                                          "live 1",
                                          "fault 0 0 tx error-cqe 35 10",
                                          "fault 0 1 rx error-cqe 4 2 skip 31 every 32",
                                          "fault 1 0 rx bad-lkey 5"};
  unsigned accepted = 0;
  for (unsigned i = 0; i < kIterations; ++i) {
    const std::string line = next_input(in, i, tokens, valid);
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " iteration " + std::to_string(i));
    ControlCommand c;
    std::string error;
    if (!parse_control_command(line, &c, &error)) {
      ASSERT_TRUE(one_line(error)) << "'" << error << "' for '" << line << "'";
      continue;
    }
    ++accepted;
    const std::string formatted = format_control_command(c);
    ControlCommand again;
    ASSERT_TRUE(parse_control_command(formatted, &again, &error))
        << error << ": '" << formatted << "' from '" << line << "'";
    ASSERT_TRUE(same_command(c, again)) << "'" << formatted << "' from '" << line << "'";
    ASSERT_EQ(format_control_command(again), formatted);
  }
  std::printf("control command fuzz: %u inputs (seed %u), %u accepted\n", kIterations, kSeed,
              accepted);
  EXPECT_GT(accepted, 0u);
}

}  // namespace
}  // namespace mana::emu
