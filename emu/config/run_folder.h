// SPDX-License-Identifier: BSD-3-Clause
// The run folder R of `mana-emu run`: R/config plus the sysfs tree (layout in doc/emulator.md).
// Tests of other components use it to present VFs without the mana-emu command.
#pragma once

#include <string>

#include "config/config.h"

namespace mana::emu {

// Creates a fresh folder `mana-emu.XXXXXX` under $TMPDIR (or /tmp), sets config->root and
// config->control (R/control.sock) and writes the folder's contents.
bool make_run_folder(EmuConfig* config, std::string* error);

// Writes R/config and the sysfs tree for `config` into the existing folder config.root.
bool write_run_folder(const EmuConfig& config, std::string* error);

std::string config_path(const std::string& root);  // R/config

}  // namespace mana::emu
