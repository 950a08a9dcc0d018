// SPDX-License-Identifier: BSD-3-Clause
// Runs the command of `mana-emu run` as a child: its own process group (the terminal's foreground
// group when mana-emu has the terminal, so Ctrl-C and Ctrl-Z reach it exactly once), SIGINT,
// SIGTERM, SIGHUP and SIGQUIT sent to mana-emu forwarded to that group, and SIGTERM to the child
// if mana-emu dies.
#pragma once

#include <string>
#include <vector>

namespace mana::emu {

// Runs `argv` (PATH lookup) with the current environment and waits for it. Returns the shell-style
// status: the exit code, 128 + signal number when killed by a signal, 127 when the command cannot
// be found, 126 when it cannot be executed.
int run_child(const std::vector<std::string>& argv);

}  // namespace mana::emu
