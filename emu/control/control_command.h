// SPDX-License-Identifier: BSD-3-Clause
// The control channel's commands (one text line each, one reply line each; doc/emulator.md):
//   netdev <vf> <port> up|down
//   link <vf> up|down                      (the NIC's link event, every port of the VF)
//   rename <vf> <port> <ifname>            (the kernel renames the port's netdev)
//   remove <vf> | add <vf> [--pci <bdf>]   (in steps with hw netdev-delay-ms / netdev-rename-ms)
//   fault <vf> <port> tx|rx error-cqe <cqe_type> <count> [skip <n>] [every <k>]
//   fault <vf> <port> tx|rx bad-lkey <count>
//   fault <vf> <port> tx stall
//   counters <vf> | live <vf>
// Parsing is a pure function; ControlTargets applies a parsed command to the Devices this process
// owns and returns the reply ("ok ..." or "error <reason>").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "device/device.h"

namespace mana::emu {

struct ControlCommand {
  enum class Kind {
    kNetdev,
    kRemove,
    kAdd,
    kFault,
    kCounters,
    kLive,
    kNetvscCounters,
    kLink,
    kRename
  };
  Kind kind = Kind::kLive;
  uint32_t vf = 0;
  uint32_t port = 0;   // kNetdev, kFault, kNetvscCounters (0-based)
  bool up = false;     // kNetdev, kLink
  Fault fault;         // kFault (its port is `port`)
  std::string pci;     // kAdd: the new PCI address (canonical), empty: the old one
  std::string ifname;  // kRename: the new name
  // kAdd: which part comes back. The kernel's mana driver brings the PCI function and its netdevs
  // back before mana_ib registers the RDMA device (doc/hardware.md §2.7): `add <vf> netdev`
  // then `add <vf> rdma` shows the window between them; plain `add <vf>` is both at once.
  enum class AddStage { kBoth, kNetdev, kRdma };
  AddStage add_stage = AddStage::kBoth;
};

// Parses one command line (no trailing newline needed). `error` gets the reason.
bool parse_control_command(std::string_view line, ControlCommand* out, std::string* error);

// What the verbs layer adds to the device model's own reaction. Hooks run on the control thread,
// one command at a time; they must not call back into ControlTargets.
struct ControlHooks {
  // After `remove` (present=false: raise IBV_EVENT_DEVICE_FATAL on every open context of the VF's
  // devices) and after `add` (present=true). Optional.
  std::function<void(uint32_t vf, bool present)> presence_changed;
  // Ids of the VF's live SQs and RQs, listed by `counters`. Optional (no queue counters without).
  std::function<std::vector<uint32_t>(uint32_t vf)> sq_ids;
  std::function<std::vector<uint32_t>(uint32_t vf)> rq_ids;
  // `netvsc-counters <vf> <port>`: the reply line for the port's synthetic NIC (emu/vmbus).
  // Optional (the command then answers that there is none).
  std::function<std::string(uint32_t vf, uint32_t port)> netvsc_counters;
};

class ControlTargets {
 public:
  // `config` (may be null: no sysfs updates) gives the run folder and the VFs' sysfs names; the
  // VF index of a command is an index into config->vfs.
  ControlTargets(std::optional<EmuConfig> config, ControlHooks hooks);

  // The Devices this process runs; thread-safe (VFs are added when a context first opens them).
  // drop_vf waits for a running command, so call it before destroying the Device and without
  // holding a lock that the hooks take.
  void add_vf(uint32_t vf, Device* device);
  void drop_vf(uint32_t vf);

  // Applies `command`; returns the reply line without newline.
  std::string execute(const ControlCommand& command);
  // parse_control_command + execute.
  std::string handle_line(std::string_view line);
  // What the kernel's periodic hardware-stats query does: every port's netdev statistics file
  // rx_missed_errors gets its VF's no-WQE drops, summed over the VF's ports (the hardware counts
  // them per function), while that port's netdev is up; 0 while it is down, as the kernel shows
  // it (doc/hardware.md §2.11). No-op without a run folder.
  void refresh_netdev_stats();
  // A VF added with `hw netdev-delay-ms` or `netdev-rename-ms` comes back in steps (its PCI
  // function, then its netdevs, renamed, then its RDMA devices: doc/hardware.md §9.25): runs the
  // steps that are due and returns when the next one is (nullopt: none waits). The control
  // server calls it from its loop.
  std::optional<std::chrono::steady_clock::time_point> run_due_adds();

 private:
  struct PendingAdd {
    uint32_t vf;
    std::chrono::steady_clock::time_point due;
    bool renaming;                         // the netdevs are there under kernel names
    std::vector<std::string> final_names;  // what udev renames them to
  };
  bool add_pending(uint32_t vf) const;
  std::string start_delayed_add(uint32_t vf, const std::string& new_pci);
  std::string finish_add(uint32_t vf);
  Device* device_of(uint32_t vf);
  std::string no_vf_error(uint32_t vf);
  std::string toggle_presence(uint32_t vf, Device* device, bool present,
                              const std::string& new_pci = {});
  std::string add_netdev_only(uint32_t vf, Device* device);
  std::string counters_json(uint32_t vf, const Device& device);

  std::optional<EmuConfig> config_;
  ControlHooks hooks_;
  std::mutex command_mu_;  // serialises commands (held while hooks run)
  std::mutex devices_mu_;  // guards devices_ (never held while hooks run)
  std::map<uint32_t, Device*> devices_;
  std::map<uint32_t, bool> link_down_;    // VFs whose NIC link is down (`link <vf> down`)
  std::vector<PendingAdd> pending_adds_;  // under command_mu_
};

}  // namespace mana::emu
