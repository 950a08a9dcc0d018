// SPDX-License-Identifier: BSD-3-Clause
// `mana-emu run` refuses, before running the command, what would otherwise leave the command with
// no device (0 ports): a --device-cpu the process cannot use, a tap: wire it cannot create. One
// line naming the cause and the fix, exit status 2, the command not run.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "process_runner.h"

namespace mana::emu {
namespace {

using testing::ProcessResult;
using testing::run_process;

std::string env_or_fail(const char* name) {
  const char* value = std::getenv(name);
  EXPECT_NE(value, nullptr) << name << " is set by meson";
  return value ? value : "";
}

// `prefix` (e.g. taskset) + mana-emu run <options> -- echo ran.
ProcessResult run_emu(const std::vector<std::string>& prefix,
                      const std::vector<std::string>& options) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {env_or_fail("MANA_EMU_EXE"), "run", "--preload",
                           env_or_fail("MANA_EMU_TEST_PRELOAD")});
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"--", "/bin/echo", "ran"});
  return run_process(argv);
}

void expect_refused(const ProcessResult& r, const std::string& message) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("mana-emu: run: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "") << "the command ran";
}

// The absolute path of a program on PATH (the runner does not search PATH); "" when absent.
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

TEST(StartupChecks, DeviceCpuThatDoesNotExist) {
  expect_refused(run_emu({}, {"--device-cpu", "1023"}),
                 "--device-cpu 1023: this machine has no CPU 1023");
}

TEST(StartupChecks, DeviceCpuOutsideTheAffinityMask) {
  const std::vector<int> cpus = allowed_cpus();
  const std::string taskset = on_path("taskset");
  if (cpus.size() < 2 || taskset.empty()) GTEST_SKIP() << "needs two usable CPUs and taskset";
  const std::string mine = std::to_string(cpus[0]), other = std::to_string(cpus[1]);
  expect_refused(run_emu({taskset, "-c", mine}, {"--device-cpu", other}),
                 "--device-cpu " + other + ": CPU " + other +
                     " is not in this process's affinity mask (taskset, cgroup cpuset); pick one "
                     "of " +
                     mine);
  const ProcessResult ok = run_emu({taskset, "-c", mine}, {"--device-cpu", mine});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "ran\n");
}

// Root drops to nobody (no capabilities); any other user has no CAP_NET_ADMIN to begin with.
TEST(StartupChecks, TapWireWithoutCapNetAdmin) {
  std::vector<std::string> prefix;
  if (geteuid() == 0) {
    const std::string setpriv = on_path("setpriv");
    if (setpriv.empty()) GTEST_SKIP() << "root needs setpriv (util-linux) to drop its capabilities";
    prefix = {setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
  }
  expect_refused(run_emu(prefix, {"--wire", "tap:manaemucap0"}),
                 "--vf 7870:00:00.0 port 0: wire 'tap:manaemucap0': TUNSETIFF failed: Operation "
                 "not permitted (needs CAP_NET_ADMIN: run as root, or create a persistent TAP");
}

// An existing interface that is not a TAP (root: EINVAL; others: EPERM first).
TEST(StartupChecks, TapWireOverAnInterfaceThatIsNotATap) {
  expect_refused(run_emu({}, {"--ports", "2", "--wire", "loop", "--wire", "tap:lo"}),
                 "--vf 7870:00:00.0 port 1: wire 'tap:lo': TUNSETIFF failed");
}

}  // namespace
}  // namespace mana::emu
