// SPDX-License-Identifier: BSD-3-Clause
// Checks `mana-emu run` makes before it starts the command, for what would otherwise fail later
// inside the command's process (where the VF would silently have no device, i.e. 0 ports).
#pragma once

#include <string>

#include "config/config.h"

namespace mana::emu {

// --device-cpu: the CPU exists and is in this process's affinity mask (the command inherits it).
// True for -1 (not pinned).
bool check_device_cpu(int cpu, std::string* error);

// Every tap:<ifname> wire can be created: the TAP is opened once and closed again (a TAP this
// creates disappears on close; the device creates it anew when it starts).
bool check_tap_wires(const EmuConfig& config, std::string* error);

}  // namespace mana::emu
