// SPDX-License-Identifier: BSD-3-Clause
#include "scenario.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "config/hw_options.h"
#include "config/sysfs_tree.h"
#include "control/control_client.h"

namespace mana::emu::test {

namespace {

Scenario g_scenario;

PortConfig port(uint8_t vf, uint8_t index, const std::string& ifname, bool up) {
  PortConfig p;
  p.mac = {0x00, 0x0d, 0x3a, 0x00, vf, static_cast<uint8_t>(index + 1)};
  p.ifname = ifname;
  p.netdev_up = up;
  p.wire = "loop";
  return p;
}

EmuConfig make_config(const std::string& name, const std::string& root) {
  EmuConfig c;
  c.root = root;
  c.control = root + "/control.sock";
  c.doorbell = name == "poll" ? EmuConfig::kPoll : EmuConfig::kTrap;
  c.device_split = name == "split";
  c.limits = name == "limits2025" ? EmuConfig::kLimits2025 : EmuConfig::kLimits6_2;
  // limits2025: the 2025 kernel under rdma-core >= 49 (no user-space limit of its own).
  if (name == "limits2025") c.hw.libmana_max_wr = 0;
  // libmana53 / libmana62: rdma-core's later CQ rules (hw libmana-cq-rule, doc/hardware.md §9.21).
  if (name == "libmana53") c.hw.libmana_cq_rule = HwBehaviour::LibmanaCqRule::kV53;
  if (name == "libmana62") c.hw.libmana_cq_rule = HwBehaviour::LibmanaCqRule::kV62;
  bool coalesce = false;
  std::string error;
  if (name == "azure2025" && !apply_profile("azure-2025", &c, &coalesce, &error)) {
    fprintf(stderr, "scenario setup: %s\n", error.c_str());
    exit(2);
  }
  VfConfig vf0;
  vf0.pci_addr = "7870:00:00.0";
  vf0.ports = {port(0, 0, "eth1", false), port(0, 1, "eth2", false), port(0, 2, "eth3", true)};
  vf0.limits = limits_of(c.limits);
  vf0.hw = c.hw;
  VfConfig vf1;
  vf1.pci_addr = "7870:00:01.0";
  vf1.ports = {port(1, 0, "eth4", false)};
  vf1.limits = limits_of(c.limits);
  vf1.hw = c.hw;
  c.vfs = {vf0, vf1};
  return c;
}

[[noreturn]] void die(const std::string& what) {
  fprintf(stderr, "scenario setup: %s\n", what.c_str());
  exit(2);
}

}  // namespace

const Scenario& setup_scenario(const std::string& name) {
  g_scenario.name = name;
  if (name == "forward") {
    unsetenv("MANA_EMU_CONFIG");
    return g_scenario;
  }
  char tmpl[] = "/tmp/mana-emu-verbs-test.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) die("mkdtemp failed");
  g_scenario.config = make_config(name, tmpl);
  std::string error;
  if (!write_sysfs_tree(g_scenario.config, &error)) die(error);
  const std::string path = std::string(tmpl) + "/config";
  std::ofstream(path) << format_config(g_scenario.config);
  setenv("MANA_EMU_CONFIG", path.c_str(), 1);
  return g_scenario;
}

const Scenario& scenario() { return g_scenario; }

std::string control(const std::string& command) {
  std::string reply;
  std::string error;
  if (!send_control_command(g_scenario.config.control, command, 5000, &reply, &error)) {
    return "error (client) " + error;
  }
  return reply;
}

bool vf_has_no_live_objects(unsigned vf, std::string* reply) {
  *reply = control("live " + std::to_string(vf));
  return *reply ==
         "ok {\"pds\":0,\"mrs\":0,\"cqs\":0,\"wqs\":0,\"sqs\":0,\"rss_qps\":0,\"contexts\":0}";
}

}  // namespace mana::emu::test
