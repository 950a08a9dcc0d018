// SPDX-License-Identifier: BSD-3-Clause
// The options of `mana-emu run` (doc/emulator.md), parsed into the emulator's configuration.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace mana::emu {

constexpr unsigned kMaxVfs = 64;

struct RunOptions {
  EmuConfig config;       // root and control stay empty until the run folder exists
  bool keep = false;      // --keep: leave the run folder behind
  bool lockstep = false;  // --lockstep: no device thread, the command calls mana_emu_step
  std::string preload;    // --preload PATH; empty: find libmana_emu.so
  std::vector<std::string> command;  // after "--"
};

// `args` are the words after "run". VF options (--ports, --mac, --ip, --ifname, --wire,
// --netdev-up) apply to the most recent --vf; before the first --vf they apply to the first VF,
// whose address the first --vf sets (7870:00:00.0 when there is none). --doorbell, --coalesce,
// --limits, --device-split, --anti-spoof on|off (default on), --profile and --hw apply to every VF
// (last one wins). False with a one-line `error`.
bool parse_run_options(const std::vector<std::string>& args, RunOptions* out, std::string* error);

}  // namespace mana::emu
