// SPDX-License-Identifier: BSD-3-Clause
// The emulator's run configuration: the `R/config` file `mana-emu run` writes and the LD_PRELOAD
// library reads (format in doc/emulator.md and doc/emulator.md "The run folder contract").
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/value_parsers.h"
#include "device/device.h"

namespace mana::emu {

constexpr unsigned kMaxPortsPerVf = 8;
// The RDMA driver id of MANA in the kernel uapi and in rdma-core >= 44's libmana (doc/hardware.md
// §6.2, "Provider binding").
constexpr uint32_t kRdmaDriverMana = 20;

// The kernel around the VF, for setup faults (doc/emulator.md "Kernel setup faults"): which modules
// are loaded and the RDMA driver id the kernel reports.
struct KernelSetup {
  bool mana_ib = true;    // false: no RDMA device (sysfs class/infiniband) and none listed
  bool ib_uverbs = true;  // false: no uverbs device (class/infiniband_verbs) and none listed
  uint32_t driver_id = kRdmaDriverMana;  // libmana binds only its own id: others are not listed
};

struct EmuConfig {
  enum DoorbellMode { kTrap, kPoll };
  enum LimitsProfile { kLimits6_2, kLimits2025 };

  std::string root;     // the run folder R
  std::string control;  // unix socket of the control channel (default R/control.sock)
  DoorbellMode doorbell = kTrap;
  bool device_split = false;  // manae_<n> (Ethernet) + mana_<n> (RNIC) per VF
  int device_cpu = -1;        // CPU the device thread is pinned to; -1: not pinned
  LimitsProfile limits = kLimits6_2;
  HwBehaviour hw;  // every VF's `hw` follows it (--hw, --profile)
  KernelSetup kernel;
  std::vector<VfConfig> vfs;  // every VF's `limits` and `hw` follow `limits` and `hw`
};

DeviceLimits limits_of(EmuConfig::LimitsProfile profile);

// Parses config text; `source` names it in errors ("<source>:<line>: <reason>"). Strict: unknown
// keys, duplicate keys, bad values and inconsistent VFs/ports are errors.
bool parse_config(std::string_view text, const std::string& source, EmuConfig* out,
                  std::string* error);
bool load_config(const std::string& path, EmuConfig* out, std::string* error);

// The config file text; parse_config(format_config(c)) gives back c.
std::string format_config(const EmuConfig& config);

// Checks the VFs and ports: 1..8 ports per VF, unique PCI addresses, MACs and ifnames, unicast
// MACs, valid wires, `pair` partners (port 2k with 2k+1, both "pair"). `where(vf, port)` names the
// offending record in the error (port is -1 for a VF-level error).
using ConfigLocator = std::function<std::string(size_t vf, int port)>;
bool validate_vfs(const EmuConfig& config, const ConfigLocator& where, std::string* error);

}  // namespace mana::emu
