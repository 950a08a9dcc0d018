// SPDX-License-Identifier: BSD-3-Clause
// Client side of the control channel (used by `mana-emu ctl` and by tests).
#pragma once

#include <string>

namespace mana::emu {

// Sends one command line and waits up to `timeout_ms` for the one-line reply (without newline).
// False with `error` when the socket cannot be reached or no full reply arrives in time.
bool send_control_command(const std::string& socket_path, const std::string& command,
                          int timeout_ms, std::string* reply, std::string* error);

}  // namespace mana::emu
