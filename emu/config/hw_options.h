// SPDX-License-Identifier: BSD-3-Clause
// `--hw KEY=VALUE` and `--profile NAME` of mana-emu run, and the config file's `hw` record: the
// open hardware behaviours of emu/device/hw_behaviour.h by name (doc/emulator.md lists them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "device/hw_behaviour.h"

namespace mana::emu {

struct EmuConfig;

// Sets one behaviour from "key=value"; false with a one-line `error` naming the key's values.
bool set_hw_option(std::string_view key_value, HwBehaviour* hw, std::string* error);

// Every behaviour as "key=value" words, in a fixed order; set_hw_option takes each back.
std::vector<std::string> format_hw_options(const HwBehaviour& hw);

// Applies a named profile to the whole configuration (behaviours, limits, coalescing, device
// split). False with `error` listing the profile names when `name` is unknown.
bool apply_profile(std::string_view name, EmuConfig* config, bool* coalesce, std::string* error);

// "default, azure-2023, azure-2025, azure-2026, strict": for help texts and errors.
std::string profile_names();

}  // namespace mana::emu
