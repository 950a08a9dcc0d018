// SPDX-License-Identifier: BSD-3-Clause
#include "tool/run_options.h"

#include <sched.h>

#include "config/hw_options.h"

namespace mana::emu {

namespace {

// What the command line says about one VF before defaults are filled in.
struct VfDraft {
  std::string pci = "7870:00:00.0";
  uint32_t ports = 1;
  std::vector<MacAddress> macs;
  std::vector<Ipv4Address> ips;
  std::vector<std::string> ifnames;
  std::vector<std::string> netvscs;
  std::vector<std::string> wires;
  std::vector<uint32_t> netdev_up;
  std::vector<uint32_t> uio_netvsc;
};

struct GlobalDraft {
  bool coalesce = false;
  bool anti_spoof = true;  // as the vPort on Azure enforces the source MAC
  uint32_t tx_pps = 0;     // no cap
};

MacAddress default_mac(uint32_t vf, uint32_t port) {
  return {0x00, 0x0d, 0x3a, 0x00, static_cast<uint8_t>(vf), static_cast<uint8_t>(port + 1)};
}

bool build_vf(const VfDraft& d, uint32_t index, uint32_t* next_ifname, const GlobalDraft& g,
              VfConfig* vf, std::string* error) {
  const std::string who = "--vf " + d.pci;
  auto too_many = [&](size_t given, const char* what) {
    *error = who + ": " + std::to_string(given) + " " + what + " for " + std::to_string(d.ports) +
             " port(s)";
    return false;
  };
  if (d.macs.size() > d.ports) return too_many(d.macs.size(), "--mac");
  if (d.ifnames.size() > d.ports) return too_many(d.ifnames.size(), "--ifname");
  if (d.ips.size() > d.ports) return too_many(d.ips.size(), "--ip");
  if (d.netvscs.size() > d.ports) return too_many(d.netvscs.size(), "--netvsc");
  if (d.wires.size() > 1 && d.wires.size() != d.ports) {
    *error =
        who + ": give one --wire for all ports or one per port (" + std::to_string(d.ports) + ")";
    return false;
  }
  vf->pci_addr = d.pci;
  vf->rx_coalescing = g.coalesce;
  vf->anti_spoof = g.anti_spoof;
  vf->tx_pps = g.tx_pps;
  vf->ports.resize(d.ports);
  for (uint32_t p = 0; p < d.ports; ++p) {
    PortConfig& port = vf->ports[p];
    port.mac = p < d.macs.size() ? d.macs[p] : default_mac(index, p);
    if (p < d.ips.size()) port.ipv4 = d.ips[p];
    port.ifname = p < d.ifnames.size() ? d.ifnames[p] : "eth" + std::to_string(*next_ifname);
    ++*next_ifname;
    if (p < d.netvscs.size()) port.netvsc = d.netvscs[p];
    port.wire = d.wires.empty() ? "loop" : d.wires[d.wires.size() == 1 ? 0 : p];
  }
  for (uint32_t p : d.netdev_up) {
    if (p >= d.ports) {
      *error = who + ": --netdev-up " + std::to_string(p) + " but the VF has " +
               std::to_string(d.ports) + " port(s)";
      return false;
    }
    vf->ports[p].netdev_up = true;
  }
  for (uint32_t p : d.uio_netvsc) {
    if (p >= d.ports) {
      *error = who + ": --uio-netvsc " + std::to_string(p) + " but the VF has " +
               std::to_string(d.ports) + " port(s)";
      return false;
    }
    vf->ports[p].uio_netvsc = true;
  }
  return true;
}

class ArgReader {
 public:
  explicit ArgReader(const std::vector<std::string>& args) : args_(args) {}
  bool done() const { return i_ >= args_.size(); }
  const std::string& peek() const { return args_[i_]; }
  std::string next() { return args_[i_++]; }
  // The value of option `name`: "--name=value" or "--name value".
  bool value(const std::string& word, const std::string& name, std::string* out,
             std::string* error) {
    if (word.size() > name.size() && word[name.size()] == '=') {
      *out = word.substr(name.size() + 1);
      return true;
    }
    if (done()) {
      *error = name + " needs a value";
      return false;
    }
    *out = next();
    return true;
  }

 private:
  const std::vector<std::string>& args_;
  size_t i_ = 0;
};

std::string option_name(const std::string& word) { return word.substr(0, word.find('=')); }

}  // namespace

bool parse_run_options(const std::vector<std::string>& args, RunOptions* out, std::string* error) {
  RunOptions opts;
  GlobalDraft global;
  std::vector<VfDraft> vfs(1);
  bool first_vf_named = false;
  ArgReader in(args);
  while (!in.done()) {
    const std::string word = in.next();
    if (word == "--") break;
    if (!word.starts_with("--")) {
      opts.command.push_back(word);  // the command starts at the first non-option word
      break;
    }
    const std::string name = option_name(word);
    const bool takes_value = name != "--keep" && name != "--device-split" && name != "--lockstep";
    std::string value;
    if (!takes_value && name != word) {
      *error = name + " takes no value";
      return false;
    }
    if (takes_value && !in.value(word, name, &value, error)) return false;
    VfDraft& vf = vfs.back();
    auto bad = [&](const char* expected) {
      *error = name + " '" + value + "': expected " + expected;
      return false;
    };
    if (name == "--vf") {
      std::string pci;
      if (!parse_pci_addr(value, &pci)) return bad("a PCI address dddd:bb:dd.f");
      if (first_vf_named) vfs.emplace_back();
      first_vf_named = true;
      vfs.back().pci = pci;
      if (vfs.size() > kMaxVfs) {
        *error = "at most " + std::to_string(kMaxVfs) + " VFs";
        return false;
      }
    } else if (name == "--ports") {
      if (!parse_uint(value, 1000, &vf.ports) || vf.ports == 0) return bad("a number of ports");
      if (vf.ports > kMaxPortsPerVf) {
        *error = "--ports " + value + ": at most 8 ports per VF";
        return false;
      }
    } else if (name == "--mac") {
      MacAddress mac;
      if (!parse_mac(value, &mac)) return bad("a MAC address aa:bb:cc:dd:ee:ff");
      vf.macs.push_back(mac);
    } else if (name == "--ip") {
      Ipv4Address ip;
      if (!parse_ipv4(value, &ip)) return bad("an IPv4 address A.B.C.D");
      vf.ips.push_back(ip);
    } else if (name == "--ifname") {
      vf.ifnames.push_back(value);
    } else if (name == "--netvsc") {
      vf.netvscs.push_back(value);
    } else if (name == "--no-module") {
      if (value == "mana_ib") {
        opts.config.kernel.mana_ib = false;
      } else if (value == "ib_uverbs") {
        opts.config.kernel.ib_uverbs = false;
      } else {
        return bad("mana_ib or ib_uverbs");
      }
    } else if (name == "--driver-id") {
      if (!parse_uint(value, 255, &opts.config.kernel.driver_id)) return bad("0..255");
    } else if (name == "--wire") {
      std::string wire_error;
      if (!check_wire_spec(value, &wire_error)) {
        *error = "--wire: " + wire_error;
        return false;
      }
      vf.wires.push_back(value);
    } else if (name == "--netdev-up") {
      uint32_t port = 0;
      if (!parse_uint(value, 1000, &port)) return bad("a 0-based port index");
      vf.netdev_up.push_back(port);
    } else if (name == "--uio-netvsc") {
      uint32_t port = 0;
      if (!parse_uint(value, 1000, &port)) return bad("a 0-based port index");
      vf.uio_netvsc.push_back(port);
    } else if (name == "--doorbell") {
      if (value != "trap" && value != "poll") return bad("trap or poll");
      opts.config.doorbell = value == "poll" ? EmuConfig::kPoll : EmuConfig::kTrap;
    } else if (name == "--coalesce") {
      if (value != "on" && value != "off") return bad("on or off");
      global.coalesce = value == "on";
    } else if (name == "--limits") {
      if (value != "6.2" && value != "2025") return bad("6.2 or 2025");
      opts.config.limits = value == "2025" ? EmuConfig::kLimits2025 : EmuConfig::kLimits6_2;
    } else if (name == "--profile") {
      if (!apply_profile(value, &opts.config, &global.coalesce, error)) return false;
    } else if (name == "--hw") {
      if (!set_hw_option(value, &opts.config.hw, error)) return false;
    } else if (name == "--device-cpu") {
      uint32_t cpu = 0;
      if (!parse_uint(value, CPU_SETSIZE - 1, &cpu)) return bad("a CPU number");
      opts.config.device_cpu = static_cast<int>(cpu);
    } else if (name == "--preload") {
      opts.preload = value;
    } else if (name == "--device-split") {
      opts.config.device_split = true;
    } else if (name == "--anti-spoof") {
      if (value != "on" && value != "off") return bad("on or off");
      global.anti_spoof = value == "on";
    } else if (name == "--tx-pps") {
      if (!parse_uint(value, UINT32_MAX, &global.tx_pps) || global.tx_pps == 0)
        return bad("a rate in frames per second (1 or more)");
    } else if (name == "--keep") {
      opts.keep = true;
    } else if (name == "--lockstep") {
      opts.lockstep = true;
    } else {
      *error = "unknown option " + name + " (see mana-emu --help)";
      return false;
    }
  }
  while (!in.done()) opts.command.push_back(in.next());
  if (opts.command.empty()) {
    *error = "no command to run (mana-emu run [options] -- <command> [args])";
    return false;
  }
  uint32_t next_ifname = 1;
  for (uint32_t i = 0; i < vfs.size(); ++i) {
    VfConfig vf;
    if (!build_vf(vfs[i], i, &next_ifname, global, &vf, error)) return false;
    vf.limits = limits_of(opts.config.limits);
    vf.hw = opts.config.hw;
    opts.config.vfs.push_back(vf);
  }
  auto where = [&](size_t vf, int port) {
    std::string at = "--vf " + opts.config.vfs[vf].pci_addr;
    return port < 0 ? at : at + " port " + std::to_string(port);
  };
  if (!validate_vfs(opts.config, where, error)) return false;
  *out = std::move(opts);
  return true;
}

}  // namespace mana::emu
