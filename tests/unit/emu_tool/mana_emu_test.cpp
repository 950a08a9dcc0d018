// SPDX-License-Identifier: BSD-3-Clause
// Runs the mana-emu executable as a user would.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "config/fs_util.h"
#include "control/control_server.h"
#include "fake_device.h"
#include "process_runner.h"
#include "temp_dir.h"

namespace mana::emu {
namespace {

using testing::ChildProcess;
using testing::ProcessResult;
using testing::run_process;

constexpr int kTimeoutMs = 20000;

std::string env_or_fail(const char* name) {
  const char* value = std::getenv(name);
  EXPECT_NE(value, nullptr) << name << " is set by meson";
  return value ? value : "";
}

std::string mana_emu() { return env_or_fail("MANA_EMU_EXE"); }
std::string probe() { return env_or_fail("MANA_EMU_TEST_PRELOAD"); }

// "key=value" lines printed by the child's script.
std::map<std::string, std::string> key_values(const std::string& out) {
  std::map<std::string, std::string> kv;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

TEST(ManaEmuRun, ChildSeesTheEnvironmentAndTheTreeWhichIsGoneAfterwards) {
  // The script prints what the child sees, as key=value lines (file contents on one line).
  const std::string script =
      "echo root=$(dirname \"$MANA_EMU_CONFIG\")\n"
      "echo sysfs=$SYSFS_PCI_DEVICES\n"
      "echo control=$MANA_EMU_CONTROL\n"
      "echo preload=$LD_PRELOAD\n"
      "echo preloaded=$MANA_EMU_TEST_PRELOADED\n"
      "echo devices=$(ls \"$SYSFS_PCI_DEVICES\" | tr '\\n' ' ')\n"
      "ib=$(dirname \"$MANA_EMU_CONFIG\")/sys/class/infiniband\n"
      "echo ibdevs=$(ls \"$ib\" | tr '\\n' ' ')\n"
      "echo slot=$(grep PCI_SLOT_NAME \"$ib/manae_1/device/uevent\")\n"
      "echo mac=$(cat \"$ib/manae_0/device/net/eth2/address\")\n"
      "echo port=$(cat \"$ib/manae_0/device/net/eth2/dev_port\")\n"
      "echo vendor=$(cat \"$SYSFS_PCI_DEVICES/7870:00:00.0/vendor\")\n"
      "echo driver=$(basename $(readlink \"$SYSFS_PCI_DEVICES/7870:00:00.0/driver\"))\n"
      "echo config=$(grep -c . \"$MANA_EMU_CONFIG\")\n"
      "echo vfline=$(grep '^vf pci=7870:00:01.0' \"$MANA_EMU_CONFIG\")\n";
  const ProcessResult r = run_process(
      {mana_emu(), "run", "--preload", probe(), "--ports", "2", "--wire", "pair", "--vf",
       "7870:00:00.0", "--vf", "7870:00:01.0", "--coalesce", "on", "--device-split", "--",
       "/bin/sh", "-c", script},
      {{"LD_PRELOAD", probe()}, {"MANA_EMU_TEST_PRELOADED", testing::kUnset}}, kTimeoutMs);
  ASSERT_EQ(r.status, 0) << r.err;
  auto kv = key_values(r.out);
  const std::string root = kv["root"];
  ASSERT_FALSE(root.empty()) << r.out;
  EXPECT_NE(root.find("/mana-emu."), std::string::npos) << root;
  EXPECT_EQ(kv["sysfs"], root + "/sys/bus/pci/devices");
  EXPECT_EQ(kv["control"], root + "/control.sock");
  EXPECT_EQ(kv["preload"], probe() + ":" + probe());  // ours first, the old one kept
  EXPECT_EQ(kv["preloaded"], "1");
  EXPECT_EQ(kv["devices"], "7870:00:00.0 7870:00:01.0");
  EXPECT_EQ(kv["ibdevs"], "mana_0 mana_1 manae_0 manae_1");
  EXPECT_EQ(kv["slot"], "PCI_SLOT_NAME=7870:00:01.0");
  EXPECT_EQ(kv["mac"], "00:0d:3a:00:00:02");
  EXPECT_EQ(kv["port"], "1");
  EXPECT_EQ(kv["vendor"], "0x1414");
  EXPECT_EQ(kv["driver"], "mana");
  EXPECT_EQ(kv["config"], "12");  // a comment, 5 globals, the hw line, 2 vf and 2 + 1 port records
  EXPECT_EQ(kv["vfline"], "vf pci=7870:00:01.0 coalesce=1 anti_spoof=1");  // on by default
  EXPECT_FALSE(path_exists(root)) << "run folder not removed";
}

TEST(ManaEmuRun, PropagatesTheExitStatus) {
  EXPECT_EQ(run_process({mana_emu(), "run", "--preload", probe(), "--", "/bin/sh", "-c", "exit 42"})
                .status,
            42);
  EXPECT_EQ(run_process({mana_emu(), "run", "--preload", probe(), "--", "/bin/true"}).status, 0);
  EXPECT_EQ(
      run_process({mana_emu(), "run", "--preload", probe(), "--", "/bin/sh", "-c", "kill -KILL $$"})
          .status,
      128 + SIGKILL);
  const ProcessResult missing =
      run_process({mana_emu(), "run", "--preload", probe(), "--", "/nonexistent/cmd"});
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(missing.err.find("cannot run /nonexistent/cmd"), std::string::npos) << missing.err;
}

// ld.so's warnings that it ignores the preloaded library: a program of another architecture than
// the library says so (the native /bin/sh in the chroot of an arm64 cross-build, whose tests run
// the arm64 mana-emu under qemu; doc/guide.md "Arm64"). Every other line stays.
static std::string without_foreign_preload_warnings(const std::string& err) {
  std::string kept;
  for (size_t at = 0; at < err.size();) {
    const size_t end = std::min(err.find('\n', at), err.size() - 1) + 1;
    const std::string line = err.substr(at, end - at);
    if (line.rfind("ERROR: ld.so: object ", 0) != 0 ||
        line.find("from LD_PRELOAD cannot be preloaded") == std::string::npos)
      kept += line;
    at = end;
  }
  return kept;
}

TEST(ManaEmuRun, KeepLeavesTheRunFolder) {
  const ProcessResult r = run_process({mana_emu(), "run", "--keep", "--preload", probe(), "--",
                                       "/bin/sh", "-c", "dirname \"$MANA_EMU_CONFIG\""});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string root = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(without_foreign_preload_warnings(r.err), "mana-emu: run folder kept: " + root + "\n");
  EXPECT_TRUE(path_exists(root + "/config"));
  std::string error;
  EXPECT_TRUE(remove_tree(root, &error)) << error;
}

TEST(ManaEmuRun, ForwardsSigtermToTheCommandAndCleansUp) {
  ChildProcess p({mana_emu(), "run", "--preload", probe(), "--", "/bin/sh", "-c",
                  "trap 'exit 7' TERM; echo ready=$(dirname \"$MANA_EMU_CONFIG\"); "
                  "while :; do sleep 0.05; done"},
                 {});
  ASSERT_TRUE(p.wait_for_output("\n", kTimeoutMs));
  ASSERT_EQ(::kill(p.pid(), SIGTERM), 0);
  const ProcessResult r = p.finish(kTimeoutMs);
  EXPECT_EQ(r.status, 7) << r.err;
  const std::string root = key_values(r.out)["ready"];
  ASSERT_FALSE(root.empty()) << r.out;
  EXPECT_FALSE(path_exists(root));
}

struct BadRun {
  std::vector<std::string> args;
  const char* message;
};

TEST(ManaEmuRun, ArgumentErrorsExitWithStatus2AndOneLine) {
  const std::vector<BadRun> cases = {
      {{"--mac", "zz:00:00:00:00:01"}, "--mac 'zz:00:00:00:00:01': expected a MAC address"},
      {{"--ports", "9"}, "--ports 9: at most 8 ports per VF"},
      {{"--vf", "7870:00:02.0", "--vf", "7870:00:02.0"}, "duplicate PCI address 7870:00:02.0"},
      {{"--wire", "coax"}, "unknown wire 'coax'"},
      {{"--preload", "/nonexistent/libmana_emu.so"}, "not found"},
  };
  for (const BadRun& c : cases) {
    std::vector<std::string> argv = {mana_emu(), "run"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    if (c.args[0] != "--preload") argv.insert(argv.end(), {"--preload", probe()});
    argv.insert(argv.end(), {"--", "/bin/true"});
    const ProcessResult r = run_process(argv);
    EXPECT_EQ(r.status, 2) << c.message;
    EXPECT_EQ(r.err.rfind("mana-emu: run: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(run_process({mana_emu()}).status, 2);
  EXPECT_EQ(run_process({mana_emu(), "launch"}).status, 2);
  const ProcessResult help = run_process({mana_emu(), "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("mana-emu run [options] -- <command>"), std::string::npos);
}

TEST(ManaEmuCtl, SendsOneCommandAndReportsTheReply) {
  testing::TempDir dir;
  const std::string sock = dir.path() + "/control.sock";
  VfConfig vf;
  vf.ports = {{{0x00, 0x0d, 0x3a, 0, 0, 1}, "eth1", false, "loop"},
              {{0x00, 0x0d, 0x3a, 0, 0, 2}, "eth2", false, "loop"}};
  testing::FakeDevice device(vf);
  ControlServer server(std::nullopt, {});
  server.add_vf(0, &device);
  std::string error;
  ASSERT_TRUE(server.start(sock, &error)) << error;

  ProcessResult r = run_process({mana_emu(), "ctl", "--control", sock, "netdev", "0", "1", "up"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ok netdev up\n");
  EXPECT_TRUE(device.netdev_up(1));

  r = run_process({mana_emu(), "ctl", "remove", "4"}, {{"MANA_EMU_CONTROL", sock}});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "error no such VF 4 (VFs: 0)\n") << r.out;

  r = run_process({mana_emu(), "ctl", "--control=" + sock, "live", "0"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("ok {\"pds\":0,", 0), 0u) << r.out;

  r = run_process({mana_emu(), "ctl", "--control", dir.path() + "/nobody.sock", "live", "0"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;

  r = run_process({mana_emu(), "ctl", "--control", sock});
  EXPECT_EQ(r.status, 2);
  r = run_process({mana_emu(), "ctl", "live", "0"}, {{"MANA_EMU_CONTROL", testing::kUnset}});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no control socket"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mana::emu
