// SPDX-License-Identifier: BSD-3-Clause
#include "control/control_command.h"

#include <cstdio>

#include <unistd.h>

#include <sstream>

#include "config/sysfs_tree.h"

namespace mana::emu {

namespace {

constexpr uint32_t kMaxIndex =
    (1u << 16) - 1;  // VF and port numbers (parse_uint's max is inclusive)
constexpr uint32_t kMaxFaultCount = 1u << 24;
constexpr uint32_t kMaxCqeType = 63;  // 6-bit CQE type field

bool fail(std::string* error, const std::string& reason) {
  *error = reason;
  return false;
}

bool number(std::string_view word, uint32_t min, uint32_t max, const char* what, uint32_t* out,
            std::string* error) {
  if (!parse_uint(word, max, out) || *out < min) {
    return fail(error, "bad " + std::string(what) + " " + quote_for_error(word) + " (" +
                           std::to_string(min) + ".." + std::to_string(max) + ")");
  }
  return true;
}

bool expect_words(const std::vector<std::string_view>& w, size_t count, const char* usage,
                  std::string* error) {
  if (w.size() == count) return true;
  return fail(error, std::string("usage: ") + usage);
}

bool parse_fault(const std::vector<std::string_view>& w, ControlCommand* cmd, std::string* error) {
  static const char* kUsage =
      "fault <vf> <port> tx|rx error-cqe <cqe_type> <count> [skip <n>] [every <k>] | fault <vf> "
      "<port> tx|rx bad-lkey <count> | fault <vf> <port> tx stall";
  if (w.size() < 5) return fail(error, std::string("usage: ") + kUsage);
  if (!number(w[1], 0, kMaxIndex, "vf", &cmd->vf, error)) return false;
  if (!number(w[2], 0, kMaxIndex, "port", &cmd->port, error)) return false;
  if (w[3] != "tx" && w[3] != "rx")
    return fail(error, "expected tx or rx, got " + quote_for_error(w[3]));
  cmd->fault.tx = w[3] == "tx";
  cmd->fault.port = cmd->port;
  if (w[4] == "error-cqe") {
    if (w.size() < 7 || w.size() % 2 == 0) return fail(error, std::string("usage: ") + kUsage);
    cmd->fault.kind = Fault::Kind::kErrorCqe;
    if (!number(w[5], 1, kMaxCqeType, "cqe_type", &cmd->fault.cqe_type, error)) return false;
    if (!number(w[6], 1, kMaxFaultCount, "count", &cmd->fault.count, error)) return false;
    // Optional: skip <n> WQEs first, then fault one WQE every <k>.
    for (size_t i = 7; i + 1 < w.size(); i += 2) {
      if (w[i] == "skip") {
        if (!number(w[i + 1], 0, kMaxFaultCount, "skip", &cmd->fault.skip, error)) return false;
      } else if (w[i] == "every") {
        if (!number(w[i + 1], 1, kMaxFaultCount, "every", &cmd->fault.every, error)) return false;
      } else {
        return fail(error, "unknown fault option " + quote_for_error(w[i]) + " (skip, every)");
      }
    }
    return true;
  }
  if (w[4] == "stall") {
    if (!expect_words(w, 5, kUsage, error)) return false;
    if (!cmd->fault.tx) return fail(error, "a stall fault is for tx only (an SQ that stops)");
    cmd->fault.kind = Fault::Kind::kStall;
    return true;
  }
  if (w[4] == "bad-lkey") {
    if (!expect_words(w, 6, kUsage, error)) return false;
    cmd->fault.kind = Fault::Kind::kBadLkey;
    return number(w[5], 1, kMaxFaultCount, "count", &cmd->fault.count, error);
  }
  return fail(error, "unknown fault " + quote_for_error(w[4]) + " (error-cqe, bad-lkey, stall)");
}

void json_queue(std::ostringstream& out, uint32_t id, const QueueCounters& c) {
  out << "{\"id\":" << id << ",\"wqes\":" << c.wqes << ",\"packets\":" << c.packets
      << ",\"bytes\":" << c.bytes << ",\"cqes\":" << c.cqes << ",\"error_cqes\":" << c.error_cqes
      << ",\"doorbells\":" << c.doorbells << ",\"wqe_cnt_doorbells\":" << c.wqe_cnt_doorbells
      << ",\"zero_length_cqes\":" << c.zero_length_cqes
      << ",\"cq_doorbell_violations\":" << c.cq_doorbell_violations << "}";
}

template <typename ReadCounters>
void json_queues(std::ostringstream& out, const std::vector<uint32_t>& ids, ReadCounters read) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out << ",";
    json_queue(out, ids[i], read(ids[i]));
  }
}

}  // namespace

bool parse_control_command(std::string_view line, ControlCommand* out, std::string* error) {
  const auto w = split_words(line);
  if (w.empty()) return fail(error, "empty command");
  ControlCommand cmd;
  const std::string_view verb = w[0];
  if (verb == "netdev") {
    if (!expect_words(w, 4, "netdev <vf> <port> up|down", error)) return false;
    cmd.kind = ControlCommand::Kind::kNetdev;
    if (!number(w[1], 0, kMaxIndex, "vf", &cmd.vf, error)) return false;
    if (!number(w[2], 0, kMaxIndex, "port", &cmd.port, error)) return false;
    if (w[3] != "up" && w[3] != "down") {
      return fail(error, "expected up or down, got " + quote_for_error(w[3]));
    }
    cmd.up = w[3] == "up";
  } else if (verb == "link") {
    if (!expect_words(w, 3, "link <vf> up|down", error)) return false;
    cmd.kind = ControlCommand::Kind::kLink;
    if (!number(w[1], 0, kMaxIndex, "vf", &cmd.vf, error)) return false;
    if (w[2] != "up" && w[2] != "down") {
      return fail(error, "expected up or down, got " + quote_for_error(w[2]));
    }
    cmd.up = w[2] == "up";
  } else if (verb == "rename") {
    if (!expect_words(w, 4, "rename <vf> <port> <ifname>", error)) return false;
    cmd.kind = ControlCommand::Kind::kRename;
    if (!number(w[1], 0, kMaxIndex, "vf", &cmd.vf, error)) return false;
    if (!number(w[2], 0, kMaxIndex, "port", &cmd.port, error)) return false;
    cmd.ifname = std::string(w[3]);
  } else if (verb == "netvsc-counters") {
    if (!expect_words(w, 3, "netvsc-counters <vf> <port>", error)) return false;
    cmd.kind = ControlCommand::Kind::kNetvscCounters;
    if (!number(w[1], 0, kMaxIndex, "vf", &cmd.vf, error)) return false;
    if (!number(w[2], 0, kMaxIndex, "port", &cmd.port, error)) return false;
  } else if (verb == "add" && w.size() == 4) {
    // add <vf> --pci <bdf>: the VF comes back at another PCI address
    cmd.kind = ControlCommand::Kind::kAdd;
    if (!number(w[1], 0, kMaxIndex, "vf", &cmd.vf, error)) return false;
    if (w[2] != "--pci") return fail(error, "usage: add <vf> [--pci dddd:bb:dd.f]");
    if (!parse_pci_addr(w[3], &cmd.pci))
      return fail(error, "bad PCI address " + quote_for_error(w[3]) + " (dddd:bb:dd.f)");
  } else if (verb == "add" && w.size() == 3) {
    // add <vf> netdev|rdma: the two halves of a re-add, in the kernel's order
    cmd.kind = ControlCommand::Kind::kAdd;
    if (!number(w[1], 0, kMaxIndex, "vf", &cmd.vf, error)) return false;
    if (w[2] != "netdev" && w[2] != "rdma")
      return fail(error, "usage: add <vf> [netdev|rdma|--pci dddd:bb:dd.f]");
    cmd.add_stage =
        w[2] == "netdev" ? ControlCommand::AddStage::kNetdev : ControlCommand::AddStage::kRdma;
  } else if (verb == "remove" || verb == "add" || verb == "counters" || verb == "live") {
    if (!expect_words(w, 2, (std::string(verb) + " <vf>").c_str(), error)) return false;
    cmd.kind = verb == "remove"     ? ControlCommand::Kind::kRemove
               : verb == "add"      ? ControlCommand::Kind::kAdd
               : verb == "counters" ? ControlCommand::Kind::kCounters
                                    : ControlCommand::Kind::kLive;
    if (!number(w[1], 0, kMaxIndex, "vf", &cmd.vf, error)) return false;
  } else if (verb == "fault") {
    cmd.kind = ControlCommand::Kind::kFault;
    if (!parse_fault(w, &cmd, error)) return false;
  } else {
    return fail(error,
                "unknown command " + quote_for_error(verb) +
                    " (netdev, link, rename, remove, add, fault, counters, live, netvsc-counters)");
  }
  *out = cmd;
  return true;
}

ControlTargets::ControlTargets(std::optional<EmuConfig> config, ControlHooks hooks)
    : config_(std::move(config)), hooks_(std::move(hooks)) {}

void ControlTargets::add_vf(uint32_t vf, Device* device) {
  std::lock_guard lock(devices_mu_);
  devices_[vf] = device;
}

void ControlTargets::drop_vf(uint32_t vf) {
  std::lock_guard command(command_mu_);  // no command still uses the Device afterwards
  std::lock_guard lock(devices_mu_);
  devices_.erase(vf);
}

std::string ControlTargets::handle_line(std::string_view line) {
  ControlCommand cmd;
  std::string error;
  if (!parse_control_command(line, &cmd, &error)) return "error " + error;
  return execute(cmd);
}

// A VF of the run's configuration that another process runs, or a number no VF has (with the VFs
// there are, so that the user sees what to type).
std::string ControlTargets::no_vf_error(uint32_t vf) {
  if (config_ && vf < config_->vfs.size())
    return "error VF " + std::to_string(vf) + " is not run by this process (pid " +
           std::to_string(::getpid()) + ")";
  std::string known;
  if (config_) {
    if (!config_->vfs.empty()) known = "0.." + std::to_string(config_->vfs.size() - 1);
  } else {
    std::lock_guard lock(devices_mu_);
    for (const auto& entry : devices_)
      known += (known.empty() ? "" : ", ") + std::to_string(entry.first);
  }
  return "error no such VF " + std::to_string(vf) + " (VFs: " + (known.empty() ? "none" : known) +
         ")";
}

Device* ControlTargets::device_of(uint32_t vf) {
  std::lock_guard lock(devices_mu_);
  auto it = devices_.find(vf);
  return it == devices_.end() ? nullptr : it->second;
}

std::string ControlTargets::execute(const ControlCommand& cmd) {
  std::lock_guard command(command_mu_);
  Device* device = device_of(cmd.vf);
  if (device == nullptr) return no_vf_error(cmd.vf);
  const bool has_port =
      cmd.kind == ControlCommand::Kind::kNetdev || cmd.kind == ControlCommand::Kind::kRename ||
      cmd.kind == ControlCommand::Kind::kFault || cmd.kind == ControlCommand::Kind::kNetvscCounters;
  if (has_port && cmd.port >= device->config().ports.size()) {
    return "error VF " + std::to_string(cmd.vf) + " has no port " + std::to_string(cmd.port);
  }
  if ((cmd.kind == ControlCommand::Kind::kAdd || cmd.kind == ControlCommand::Kind::kRemove ||
       cmd.kind == ControlCommand::Kind::kRename) &&
      add_pending(cmd.vf))
    return "error VF " + std::to_string(cmd.vf) +
           " is being added (its netdevs come after its PCI function: hw netdev-delay-ms, "
           "netdev-rename-ms)";
  const bool link_events = !config_ || config_->vfs[cmd.vf].hw.link_events;
  switch (cmd.kind) {
    case ControlCommand::Kind::kNetdev: {
      device->set_netdev_up(cmd.port, cmd.up);
      std::string error;
      // Without the NIC's link the netdev's operstate stays down, up or not. Before Linux 6.19
      // (hw link-events=off) the carrier is on exactly while the netdev is up.
      if (config_ && !link_events && !set_link(*config_, cmd.vf, cmd.port, cmd.up, cmd.up, &error))
        return "error " + error;
      if (config_ &&
          !set_operstate(*config_, cmd.vf, cmd.port, cmd.up && !link_down_[cmd.vf], &error)) {
        return "error " + error;
      }
      return std::string("ok netdev ") + (cmd.up ? "up" : "down");
    }
    case ControlCommand::Kind::kLink: {
      if (!link_events)
        return "error VF " + std::to_string(cmd.vf) +
               " has hw link-events=off: kernels before 6.19 hear no NIC link events";
      // The kernel's mana driver turns the carrier of every port of the function off or on
      // (doc/hardware.md §9.24); the data path is left as it is.
      link_down_[cmd.vf] = !cmd.up;
      std::string error;
      for (uint32_t port = 0; config_ && port < device->config().ports.size(); ++port)
        if (!set_link(*config_, cmd.vf, port, cmd.up, device->netdev_up(port), &error))
          return "error " + error;
      return std::string("ok link ") + (cmd.up ? "up" : "down");
    }
    case ControlCommand::Kind::kRename: {
      if (!config_) return "error no run folder: rename needs one";
      std::string error;
      if (!rename_netdev(*config_, cmd.vf, cmd.port, cmd.ifname, &error)) return "error " + error;
      return "ok renamed " + cmd.ifname;
    }
    case ControlCommand::Kind::kRemove:
      return toggle_presence(cmd.vf, device, false);
    case ControlCommand::Kind::kAdd:
      if (cmd.add_stage == ControlCommand::AddStage::kNetdev)
        return add_netdev_only(cmd.vf, device);
      if (cmd.add_stage == ControlCommand::AddStage::kBoth && config_ && !device->present() &&
          !vf_rdma_pending(*config_, cmd.vf) &&
          (config_->vfs[cmd.vf].hw.netdev_delay_ms != 0 ||
           config_->vfs[cmd.vf].hw.netdev_rename_ms != 0))
        return start_delayed_add(cmd.vf, cmd.pci);
      return toggle_presence(cmd.vf, device, true, cmd.pci);
    case ControlCommand::Kind::kFault:
      device->inject(cmd.fault);
      return "ok fault armed";
    case ControlCommand::Kind::kCounters:
      return "ok " + counters_json(cmd.vf, *device);
    case ControlCommand::Kind::kNetvscCounters:
      if (!hooks_.netvsc_counters)
        return "error VF " + std::to_string(cmd.vf) + " port " + std::to_string(cmd.port) +
               " has no synthetic NIC (mana-emu run --uio-netvsc)";
      return hooks_.netvsc_counters(cmd.vf, cmd.port);
    case ControlCommand::Kind::kLive: {
      const LiveObjects l = device->live_objects();
      std::ostringstream out;
      out << "ok {\"pds\":" << l.pds << ",\"mrs\":" << l.mrs << ",\"cqs\":" << l.cqs
          << ",\"wqs\":" << l.wqs << ",\"sqs\":" << l.sqs << ",\"rss_qps\":" << l.rss_qps
          << ",\"contexts\":" << l.contexts << "}";
      return out.str();
    }
  }
  return "error internal";
}

std::string ControlTargets::toggle_presence(uint32_t vf, Device* device, bool present,
                                            const std::string& new_pci) {
  if (device->present() == present) {
    return "error VF " + std::to_string(vf) + (present ? " is present" : " is already removed");
  }
  if (!new_pci.empty() && !config_) return "error no run folder: --pci needs one";
  std::string error;
  const bool rdma_pending = present && config_ && vf_rdma_pending(*config_, vf);
  if (rdma_pending && !new_pci.empty())
    return "error VF " + std::to_string(vf) + " is back already: no --pci";
  // Queues die before the sysfs entries vanish; on an add the device works before they appear, as
  // the kernel lists an RDMA device only once it is registered: a prober that lists it (the
  // driver's wait for mana_ib after a staged add) can open and query it at once.
  device->set_present(present);
  const bool moved = rdma_pending
                         ? add_vf_rdma(*config_, vf, &error)
                         : !config_ || set_vf_present(*config_, vf, present, &error, new_pci);
  if (!moved) {
    if (present) device->set_present(false);
    return "error " + error;
  }
  if (hooks_.presence_changed) hooks_.presence_changed(vf, present);
  std::string reply =
      std::string("ok VF ") + std::to_string(vf) + (present ? " added" : " removed");
  if (!new_pci.empty()) reply += " at " + config_->vfs[vf].pci_addr;
  return reply;
}

std::string ControlTargets::add_netdev_only(uint32_t vf, Device* device) {
  if (device->present()) return "error VF " + std::to_string(vf) + " is present";
  if (!config_) return "error no run folder: a staged add needs one";
  std::string error;
  if (!set_vf_present(*config_, vf, true, &error, {}, /*with_rdma=*/false)) return "error " + error;
  return "ok VF " + std::to_string(vf) + " netdev added (no RDMA device yet)";
}

bool ControlTargets::add_pending(uint32_t vf) const {
  for (const PendingAdd& a : pending_adds_)
    if (a.vf == vf) return true;
  return false;
}

// The PCI function comes back alone (with the kernel's hot-add event, and the host's offer of the
// VF to its synthetic NIC); its netdevs and RDMA devices follow from run_due_adds.
std::string ControlTargets::start_delayed_add(uint32_t vf, const std::string& new_pci) {
  std::string error;
  if (!set_vf_present(*config_, vf, true, &error, new_pci, /*with_rdma=*/false,
                      /*with_netdevs=*/false))
    return "error " + error;
  const uint32_t delay = config_->vfs[vf].hw.netdev_delay_ms;
  pending_adds_.push_back(
      {vf, std::chrono::steady_clock::now() + std::chrono::milliseconds(delay), false, {}});
  if (hooks_.presence_changed) hooks_.presence_changed(vf, true);
  std::string reply = "ok VF " + std::to_string(vf) + " added";
  if (!new_pci.empty()) reply += " at " + config_->vfs[vf].pci_addr;
  return reply + ", its netdevs in " + std::to_string(delay) + " ms";
}

// The last step: the RDMA devices appear and the device takes contexts again.
std::string ControlTargets::finish_add(uint32_t vf) {
  Device* device = device_of(vf);
  std::string error;
  if (device != nullptr) device->set_present(true);
  if (config_->kernel.mana_ib && !add_vf_rdma(*config_, vf, &error)) {
    if (device != nullptr) device->set_present(false);
    return error;
  }
  return {};
}

std::optional<std::chrono::steady_clock::time_point> ControlTargets::run_due_adds() {
  std::lock_guard command(command_mu_);
  const auto now = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> next;
  for (size_t i = 0; i < pending_adds_.size();) {
    PendingAdd& a = pending_adds_[i];
    if (a.due > now) {
      next = next ? std::min(*next, a.due) : a.due;
      ++i;
      continue;
    }
    const HwBehaviour& hw = config_->vfs[a.vf].hw;
    std::string error;
    bool done = true;
    if (!a.renaming) {
      if (!add_vf_netdevs(*config_, a.vf, hw.netdev_rename_ms != 0, &a.final_names, &error)) {
        fprintf(stderr, "mana-emu: VF %u: its netdevs: %s\n", a.vf, error.c_str());
      } else if (hw.netdev_rename_ms != 0) {
        a.renaming = true;
        a.due = now + std::chrono::milliseconds(hw.netdev_rename_ms);
        next = next ? std::min(*next, a.due) : a.due;
        done = false;
      }
    } else {
      for (uint32_t p = 0; p < a.final_names.size() && error.empty(); ++p)
        if (!rename_netdev(*config_, a.vf, p, a.final_names[p], &error))
          fprintf(stderr, "mana-emu: VF %u: renaming its netdev: %s\n", a.vf, error.c_str());
    }
    if (!done) {
      ++i;
      continue;
    }
    error = finish_add(a.vf);
    if (!error.empty())
      fprintf(stderr, "mana-emu: VF %u: its RDMA devices: %s\n", a.vf, error.c_str());
    pending_adds_.erase(pending_adds_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return next;
}

void ControlTargets::refresh_netdev_stats() {
  if (!config_) return;
  std::lock_guard<std::mutex> command(command_mu_);  // not while `remove`/`add` move the tree
  std::map<uint32_t, Device*> devices;
  {
    std::lock_guard<std::mutex> guard(devices_mu_);
    devices = devices_;
  }
  for (const auto& [vf, device] : devices) {
    const uint32_t ports = static_cast<uint32_t>(device->config().ports.size());
    uint64_t drops = 0;
    for (uint32_t p = 0; p < ports; ++p) drops += device->port_counters(p).rx_no_wqe_drops;
    std::string error;
    // mana_get_stats64 returns before filling anything while the port's netdev is down, and the
    // core zeroed the answer: the file reads 0 (doc/hardware.md §2.11).
    for (uint32_t p = 0; p < ports; ++p)
      if (!set_netdev_stat(*config_, vf, p, "rx_missed_errors", device->netdev_up(p) ? drops : 0,
                           &error))
        fprintf(stderr, "mana-emu: %s\n", error.c_str());
  }
}

std::string ControlTargets::counters_json(uint32_t vf, const Device& device) {
  std::ostringstream out;
  out << "{\"vf\":" << vf << ",\"present\":" << (device.present() ? "true" : "false")
      << ",\"bad_doorbells\":" << device.bad_doorbells() << ",\"ports\":[";
  for (uint32_t p = 0; p < device.config().ports.size(); ++p) {
    const PortCounters c = device.port_counters(p);
    out << (p ? "," : "") << "{\"port\":" << p << ",\"tx_frames\":" << c.tx_frames
        << ",\"rx_frames\":" << c.rx_frames << ",\"rx_no_wqe_drops\":" << c.rx_no_wqe_drops
        << ",\"rx_filtered\":" << c.rx_filtered << ",\"rx_mtu_drops\":" << c.rx_mtu_drops
        << ",\"tx_wire_drops\":" << c.tx_wire_drops << ",\"rx_oversize\":" << c.rx_oversize
        << ",\"rx_stale_steering_drops\":" << c.rx_stale_steering_drops
        << ",\"rx_stale_steering_cqes\":" << c.rx_stale_steering_cqes << "}";
  }
  out << "],\"sqs\":[";
  if (hooks_.sq_ids) {
    json_queues(out, hooks_.sq_ids(vf), [&](uint32_t id) { return device.sq_counters(id); });
  }
  out << "],\"rqs\":[";
  if (hooks_.rq_ids) {
    json_queues(out, hooks_.rq_ids(vf), [&](uint32_t id) { return device.rq_counters(id); });
  }
  out << "]}";
  return out.str();
}

}  // namespace mana::emu
