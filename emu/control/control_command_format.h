// SPDX-License-Identifier: BSD-3-Clause
// A parsed control command as its text line: parse_control_command(format_control_command(c))
// gives back c (the fuzz test checks it; a client can build its lines with it).
#pragma once

#include <string>

#include "control/control_command.h"

namespace mana::emu {

std::string format_control_command(const ControlCommand& command);

}  // namespace mana::emu
