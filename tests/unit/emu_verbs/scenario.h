// SPDX-License-Identifier: BSD-3-Clause
// The emulated machine a test process runs against: one run folder (config + sysfs tree, written
// with emu/config's own writers) per process, chosen by `--scenario=<name>` on the command line,
// because libmana_emu.so reads MANA_EMU_CONFIG once per process.
#pragma once

#include <string>

#include "config/config.h"

namespace mana::emu::test {

// Scenarios: "trap", "poll" (VF 0: ports 0..1 loop + port 2 with its netdev up; VF 1: one loop
// port, used for hot removal), "split" (the 2025 device split), "limits2025" (2048 WR/CQE, no
// user-space limit: rdma-core >= 49), "azure2025" (`--profile azure-2025`: 2048 in the kernel but
// rdma-core 44's 256 in user space, raw-QP-first, EBUSY), "libmana53" and "libmana62" (rdma-core
// 53's and 62's CQ rules), "forward" (no MANA_EMU_CONFIG at all).
struct Scenario {
  std::string name;
  EmuConfig config;  // empty for "forward"
};

// Builds the scenario, writes its run folder and sets MANA_EMU_CONFIG. Exits on failure.
const Scenario& setup_scenario(const std::string& name);
const Scenario& scenario();

// Sends one control-channel command to the emulator serving this process; the reply line.
std::string control(const std::string& command);

// True when every live-object count of the VF is zero ("live <vf>" over the control channel).
bool vf_has_no_live_objects(unsigned vf, std::string* reply);

}  // namespace mana::emu::test
