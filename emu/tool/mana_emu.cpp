// SPDX-License-Identifier: BSD-3-Clause
// mana-emu: runs a command on emulated MANA VFs (`run`), talks to their control channel (`ctl`)
// and shows what a fabric wire did (`fabric`).
// Usage and examples: doc/emulator.md and `mana-emu --help`.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/fs_util.h"
#include "config/run_folder.h"
#include "control/control_client.h"
#include "tool/child_process.h"
#include "tool/preload_path.h"
#include "tool/run_options.h"
#include "wire/endpoints.h"
#include "wire/fabric_wire.h"
#include "tool/startup_checks.h"

#ifndef MANA_EMU_LIBDIR
#define MANA_EMU_LIBDIR "/usr/local/lib"
#endif

namespace {

using namespace mana::emu;

constexpr int kUsageError = 2;
constexpr int kControlTimeoutMs = 10000;

const char kUsage[] =
    R"(usage: mana-emu run [options] -- <command> [args]
       mana-emu ctl [--control PATH] <command...>
       mana-emu fabric <name>
       mana-emu --help

run: presents emulated MANA VFs (sysfs tree, libmana_emu.so preloaded) to <command>.
  --vf PCI            add a VF (dddd:bb:dd.f); the first --vf names the first VF
                      (default: one VF 7870:00:00.0)
  --ports N           ports of the current VF (1..8, default 1)
  --mac MAC           MAC of the next port of the current VF
                      (default 00:0d:3a:00:<vf>:<port+1>)
  --ip A.B.C.D        IPv4 address of the next port of the current VF (needed on fabric wires)
  --ifname NAME       netdev name of the next port of the current VF (default eth1, eth2, ...)
  --wire SPEC         loop | pair | null | tap:<ifname> | shm:<name> | fabric:<name>; once for
                      all ports of the current VF or once per port (default loop)
  --netdev-up PORT    the kernel netdev of that port (0-based) of the current VF is up
  --netvsc NAME       a synthetic netvsc interface with the next port's MAC, its VF enslaved
  --uio-netvsc PORT   that port (0-based) of the current VF gets a synthetic NIC with its MAC,
                      bound to uio_hv_generic, for DPDK's net_netvsc with the port as its VF
  --no-module M       setup fault: kernel module M (mana_ib or ib_uverbs) is not loaded
  --driver-id N       setup fault: the kernel's RDMA driver id for MANA (default 20, libmana's)
  --doorbell MODE     trap (default, exact) | poll (fast, one SQ/RQ per context)
  --coalesce on|off   RX CQE coalescing (kernels >= 6.5), default off
  --limits 6.2|2025   device limits: 256 WR/CQE (default) or 2048 WR/CQE, 0xFFFFFF MRs
  --device-split      two RDMA devices per VF: manae_<n> (Ethernet) and mana_<n> (RNIC)
  --device-cpu N      pin the emulator's device thread to CPU N (benchmarks: keep it off the
                      application's forwarding cores)
  --tx-pps N          every port sends at most N frames a second (Azure's per-VM cap, shared
                      with the port's synthetic NIC; tests that compare rates pin them below what
                      the machine gives)
  --anti-spoof on|off drop TX frames whose source MAC is not the port's (default on, as Azure)
  --profile NAME      default | azure-2023 | azure-2025 | azure-2026 | strict: a kernel/Azure
                      generation's
                      limits, coalescing, device split and open behaviours (doc/hardware.md);
                      options after it override it
  --hw KEY=VALUE      one open hardware behaviour (doc/emulator.md lists the keys), every VF
  --lockstep          no device thread: the command runs the device model by calling
                      mana_emu_step() (found with dlsym; doc/emulator.md "Lockstep")
  --keep              keep the run folder afterwards
  --preload PATH      the LD_PRELOAD library (default: libmana_emu.so of this build/install)
  Exit status: the command's (128+N when killed by signal N); 2 for mana-emu's own errors.

ctl: sends one control command to the process running the VFs ($MANA_EMU_CONTROL by default):
  netdev <vf> <port> up|down       remove <vf>       add <vf>
  fault <vf> <port> tx|rx error-cqe <cqe_type> <count> [skip <n>] [every <k>]
  fault <vf> <port> tx|rx bad-lkey <count>
  fault <vf> <port> tx stall
  counters <vf>                    live <vf>
  link <vf> up|down                the NIC's link event: the VF netdevs' carrier off/on
  rename <vf> <port> <ifname>      the kernel renames the port's netdev (also while removed)
  Prints the reply; exit status 0 for "ok ...", 1 otherwise.

fabric: one JSON line per port of the fabric wire <name>, attached or gone (its MAC, IP and what
  the fabric did with the frames it sent); exit status 1 when there is no such fabric.
)";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "mana-emu: %s\n", message.c_str());
  return kUsageError;
}

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

int cmd_run(const std::vector<std::string>& args) {
  RunOptions opts;
  std::string error;
  if (!parse_run_options(args, &opts, &error)) return usage_error("run: " + error);
  if (!check_device_cpu(opts.config.device_cpu, &error) || !check_tap_wires(opts.config, &error))
    return usage_error("run: " + error);
  const std::string preload = opts.preload.empty()
                                  ? find_preload(self_exe(), MANA_EMU_LIBDIR, &error)
                                  : checked_preload(opts.preload, &error);
  if (preload.empty()) return usage_error("run: " + error);
  if (!make_run_folder(&opts.config, &error)) return usage_error("run: " + error);

  const char* old_preload = std::getenv("LD_PRELOAD");
  std::string ld_preload = preload;
  if (old_preload && *old_preload) ld_preload += std::string(":") + old_preload;
  ::setenv("SYSFS_PCI_DEVICES", (opts.config.root + "/sys/bus/pci/devices").c_str(), 1);
  ::setenv("MANA_EMU_CONFIG", config_path(opts.config.root).c_str(), 1);
  ::setenv("MANA_EMU_CONTROL", opts.config.control.c_str(), 1);
  ::setenv("LD_PRELOAD", ld_preload.c_str(), 1);
  if (opts.lockstep) ::setenv("MANA_EMU_LOCKSTEP", "1", 1);

  const int status = run_child(opts.command);
  for (const VfConfig& vf : opts.config.vfs)
    for (const PortConfig& port : vf.ports)
      if (port.wire.starts_with("fabric:")) {
        release_fabric_if_unused(port.wire.substr(7));
      } else if (port.wire.starts_with("shm:")) {
        release_shm_if_unused(port.wire.substr(4));
      }
  if (opts.keep) {
    std::fprintf(stderr, "mana-emu: run folder kept: %s\n", opts.config.root.c_str());
  } else if (!remove_tree(opts.config.root, &error)) {
    std::fprintf(stderr, "mana-emu: %s\n", error.c_str());
  }
  return status;
}

int cmd_ctl(const std::vector<std::string>& args) {
  std::string path;
  size_t i = 0;
  if (i < args.size() && args[i].starts_with("--control")) {
    if (args[i].starts_with("--control=")) {
      path = args[i].substr(10);
      i += 1;
    } else if (args[i] == "--control" && i + 1 < args.size()) {
      path = args[i + 1];
      i += 2;
    } else {
      return usage_error("ctl: --control needs a PATH");
    }
  } else if (const char* env = std::getenv("MANA_EMU_CONTROL")) {
    path = env;
  }
  if (path.empty())
    return usage_error("ctl: no control socket (--control PATH or MANA_EMU_CONTROL)");
  std::string command;
  for (; i < args.size(); ++i) command += (command.empty() ? "" : " ") + args[i];
  if (command.empty()) return usage_error("ctl: no command (see mana-emu --help)");
  std::string reply, error;
  if (!send_control_command(path, command, kControlTimeoutMs, &reply, &error)) {
    std::fprintf(stderr, "mana-emu ctl: %s\n", error.c_str());
    return 1;
  }
  std::printf("%s\n", reply.c_str());
  return reply == "ok" || reply.starts_with("ok ") ? 0 : 1;
}

int cmd_fabric(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage_error("fabric: needs exactly one fabric name");
  std::vector<FabricPortCounters> ports;
  std::string error;
  if (!read_fabric_counters(args[0], &ports, &error)) {
    std::fprintf(stderr, "mana-emu fabric: %s\n", error.c_str());
    return 1;
  }
  for (const FabricPortCounters& c : ports) {
    MacAddress mac;
    std::copy(c.mac.begin(), c.mac.end(), mac.begin());
    std::printf(
        "{\"mac\":\"%s\",\"ip\":\"%s\",\"attached\":%s,\"delivered\":%llu,\"arp_replies\":%llu,"
        "\"group_not_delivered\":%llu,\"unknown_ip\":%llu,\"spoofed\":%llu,"
        "\"unroutable\":%llu,\"full_drops\":%llu}\n",
        format_mac(mac).c_str(), format_fabric_ipv4(c.ipv4).c_str(), c.attached ? "true" : "false",
        static_cast<unsigned long long>(c.delivered),
        static_cast<unsigned long long>(c.arp_replies),
        static_cast<unsigned long long>(c.group_not_delivered),
        static_cast<unsigned long long>(c.unknown_ip), static_cast<unsigned long long>(c.spoofed),
        static_cast<unsigned long long>(c.unroutable),
        static_cast<unsigned long long>(c.full_drops));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return kUsageError;
  }
  const std::string sub = args[0];
  args.erase(args.begin());
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (sub == "run") return cmd_run(args);
  if (sub == "ctl") return cmd_ctl(args);
  if (sub == "fabric") return cmd_fabric(args);
  return usage_error("unknown command '" + sub + "' (run, ctl, fabric, --help)");
}
