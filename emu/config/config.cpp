// SPDX-License-Identifier: BSD-3-Clause
#include "config/config.h"

#include <sched.h>

#include <fstream>
#include <set>
#include <sstream>

#include "config/hw_options.h"

namespace mana::emu {

namespace {

struct Field {
  std::string_view key, value;
};

// Parses one line of the file; keeps line numbers of records for validate_vfs's messages.
class ConfigParser {
 public:
  ConfigParser(const std::string& source, EmuConfig* out) : source_(source), out_(out) {}

  bool parse(std::string_view text, std::string* error) {
    size_t line_no = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(pos, end - pos);
      ++line_no;
      line_ = line_no;
      if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
      if (!parse_line(split_words(line), error)) return false;
      pos = end + 1;
    }
    return finish(error);
  }

 private:
  bool fail(std::string* error, const std::string& reason) {
    *error = source_ + ":" + std::to_string(line_) + ": " + reason;
    return false;
  }

  bool split_field(std::string_view word, Field* field, std::string* error) {
    size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return fail(error, "expected key=value, got " + quote_for_error(word));
    }
    field->key = word.substr(0, eq);
    field->value = word.substr(eq + 1);
    if (field->value.empty()) return fail(error, "empty value for " + quote_for_error(field->key));
    return true;
  }

  // Splits `words` into fields, rejecting duplicates and keys outside `allowed`.
  bool fields_of(const std::vector<std::string_view>& words, size_t first,
                 std::initializer_list<std::string_view> allowed, std::vector<Field>* fields,
                 std::string* error) {
    std::set<std::string_view> seen;
    for (size_t i = first; i < words.size(); ++i) {
      Field f;
      if (!split_field(words[i], &f, error)) return false;
      bool known = false;
      for (auto key : allowed) known |= key == f.key;
      if (!known) return fail(error, "unknown key " + quote_for_error(f.key));
      if (!seen.insert(f.key).second) {
        return fail(error, "duplicate key " + quote_for_error(f.key));
      }
      fields->push_back(f);
    }
    return true;
  }

  bool bad_value(std::string* error, const Field& f, const char* expected) {
    return fail(error, "bad value " + quote_for_error(f.value) + " for " + quote_for_error(f.key) +
                           " (expected " + expected + ")");
  }

  bool parse_line(const std::vector<std::string_view>& words, std::string* error) {
    if (words.empty()) return true;
    if (words[0] == "vf") return parse_vf(words, error);
    if (words[0] == "port") return parse_port(words, error);
    if (words[0] == "hw") return parse_hw(words, error);
    if (words.size() != 1) return fail(error, "one key=value per line outside vf/port records");
    if (!vfs_started_.empty()) return fail(error, "global settings must come before the first vf");
    std::vector<Field> fields;
    if (!fields_of(words, 0,
                   {"root", "doorbell", "control", "device_split", "limits", "device_cpu",
                    "mana_ib", "ib_uverbs", "driver_id"},
                   &fields, error)) {
      return false;
    }
    const Field& f = fields[0];
    if (!globals_seen_.insert(std::string(f.key)).second) {
      return fail(error, "duplicate key " + quote_for_error(f.key));
    }
    if (f.key == "root") {
      out_->root = f.value;
    } else if (f.key == "control") {
      out_->control = f.value;
    } else if (f.key == "doorbell") {
      if (f.value == "trap") {
        out_->doorbell = EmuConfig::kTrap;
      } else if (f.value == "poll") {
        out_->doorbell = EmuConfig::kPoll;
      } else {
        return bad_value(error, f, "trap or poll");
      }
    } else if (f.key == "device_split") {
      if (!parse_bit(f.value, &out_->device_split)) return bad_value(error, f, "0 or 1");
    } else if (f.key == "mana_ib") {
      if (!parse_bit(f.value, &out_->kernel.mana_ib)) return bad_value(error, f, "0 or 1");
    } else if (f.key == "ib_uverbs") {
      if (!parse_bit(f.value, &out_->kernel.ib_uverbs)) return bad_value(error, f, "0 or 1");
    } else if (f.key == "driver_id") {
      if (!parse_uint(f.value, 255, &out_->kernel.driver_id)) return bad_value(error, f, "0..255");
    } else if (f.key == "device_cpu") {
      uint32_t cpu = 0;
      if (!parse_uint(f.value, CPU_SETSIZE - 1, &cpu)) return bad_value(error, f, "a CPU number");
      out_->device_cpu = static_cast<int>(cpu);
    } else if (f.key == "limits") {
      if (f.value == "6.2") {
        out_->limits = EmuConfig::kLimits6_2;
      } else if (f.value == "2025") {
        out_->limits = EmuConfig::kLimits2025;
      } else {
        return bad_value(error, f, "6.2 or 2025");
      }
    }
    return true;
  }

  // `hw key=value ...`: open hardware behaviours for every VF (before the first vf record).
  bool parse_hw(const std::vector<std::string_view>& words, std::string* error) {
    if (!vfs_started_.empty()) return fail(error, "hw must come before the first vf");
    for (size_t i = 1; i < words.size(); ++i) {
      std::string why;
      if (!set_hw_option(words[i], &out_->hw, &why)) return fail(error, why);
    }
    return true;
  }

  bool parse_vf(const std::vector<std::string_view>& words, std::string* error) {
    std::vector<Field> fields;
    if (!fields_of(words, 1, {"pci", "coalesce", "anti_spoof", "tx_pps"}, &fields, error))
      return false;
    VfConfig vf;  // anti_spoof defaults to on
    bool has_pci = false;
    for (const Field& f : fields) {
      if (f.key == "pci") {
        if (!parse_pci_addr(f.value, &vf.pci_addr)) return bad_value(error, f, "dddd:bb:dd.f");
        has_pci = true;
      } else if (f.key == "coalesce") {
        if (!parse_bit(f.value, &vf.rx_coalescing)) return bad_value(error, f, "0 or 1");
      } else if (f.key == "anti_spoof") {
        if (!parse_bit(f.value, &vf.anti_spoof)) return bad_value(error, f, "0 or 1");
      } else if (f.key == "tx_pps") {
        if (!parse_uint(f.value, UINT32_MAX, &vf.tx_pps))
          return bad_value(error, f, "frames per second");
      }
    }
    if (!has_pci) return fail(error, "vf record without pci=");
    out_->vfs.push_back(vf);
    vfs_started_.push_back(line_);
    port_lines_.emplace_back();
    return true;
  }

  bool parse_port(const std::vector<std::string_view>& words, std::string* error) {
    if (out_->vfs.empty()) return fail(error, "port record before any vf record");
    std::vector<Field> fields;
    if (!fields_of(words, 1, {"mac", "ifname", "up", "wire", "ip", "netvsc", "uio_netvsc"}, &fields,
                   error))
      return false;
    PortConfig port;
    bool has_mac = false, has_ifname = false;
    for (const Field& f : fields) {
      if (f.key == "mac") {
        if (!parse_mac(f.value, &port.mac)) return bad_value(error, f, "aa:bb:cc:dd:ee:ff");
        has_mac = true;
      } else if (f.key == "ifname") {
        port.ifname = f.value;
        has_ifname = true;
      } else if (f.key == "up") {
        if (!parse_bit(f.value, &port.netdev_up)) return bad_value(error, f, "0 or 1");
      } else if (f.key == "wire") {
        port.wire = f.value;
      } else if (f.key == "netvsc") {
        port.netvsc = f.value;
      } else if (f.key == "uio_netvsc") {
        if (!parse_bit(f.value, &port.uio_netvsc)) return bad_value(error, f, "0 or 1");
      } else if (f.key == "ip") {
        if (!parse_ipv4(f.value, &port.ipv4)) return bad_value(error, f, "A.B.C.D");
      }
    }
    if (!has_mac) return fail(error, "port record without mac=");
    if (!has_ifname) return fail(error, "port record without ifname=");
    out_->vfs.back().ports.push_back(port);
    port_lines_.back().push_back(line_);
    return true;
  }

  bool finish(std::string* error) {
    if (out_->root.empty()) {
      *error = source_ + ": missing root=";
      return false;
    }
    if (out_->control.empty()) out_->control = out_->root + "/control.sock";
    for (VfConfig& vf : out_->vfs) {
      vf.limits = limits_of(out_->limits);
      vf.hw = out_->hw;
    }
    auto where = [this](size_t vf, int port) {
      size_t line = port < 0 || static_cast<size_t>(port) >= port_lines_[vf].size()
                        ? vfs_started_[vf]
                        : port_lines_[vf][static_cast<size_t>(port)];
      return source_ + ":" + std::to_string(line);
    };
    if (out_->vfs.empty()) {
      *error = source_ + ": no vf record";
      return false;
    }
    return validate_vfs(*out_, where, error);
  }

  const std::string& source_;
  EmuConfig* out_;
  size_t line_ = 0;
  std::set<std::string> globals_seen_;
  std::vector<size_t> vfs_started_;              // line of each vf record
  std::vector<std::vector<size_t>> port_lines_;  // line of each port record, per vf
};

// First-seen check for unique names; returns false when `value` was seen before.
bool remember(std::set<std::string>* seen, const std::string& value) {
  return seen->insert(value).second;
}

// A fabric port needs a unicast IPv4 address no other port of that fabric has here; other wires
// ignore it.
bool check_port_ip(const PortConfig& port, std::set<std::string>* fabric_ips, std::string* error) {
  const bool fabric = port.wire.starts_with("fabric:");
  const std::string ip = format_ipv4(port.ipv4);
  if (!fabric) return true;
  if (port.ipv4 == Ipv4Address{}) {
    *error = "wire " + port.wire +
             " needs the port's IPv4 address (--ip A.B.C.D, or ip= in the port record)";
    return false;
  }
  if (port.ipv4[0] >= 224 || port.ipv4[0] == 0 || port.ipv4[0] == 127) {
    *error = "IP " + ip + " is not a unicast host address";
    return false;
  }
  if (!remember(fabric_ips, port.wire + " " + ip)) {
    *error = "IP " + ip + " is used by another port of " + port.wire;
    return false;
  }
  return true;
}

}  // namespace

DeviceLimits limits_of(EmuConfig::LimitsProfile profile) {
  return profile == EmuConfig::kLimits2025 ? DeviceLimits::kernel_2025()
                                           : DeviceLimits::kernel_6_2();
}

bool validate_vfs(const EmuConfig& config, const ConfigLocator& where, std::string* error) {
  std::set<std::string> pcis, macs, ifnames, taps, fabric_ips;
  if (config.vfs.empty()) {
    *error = "no VF configured";
    return false;
  }
  for (size_t v = 0; v < config.vfs.size(); ++v) {
    const VfConfig& vf = config.vfs[v];
    auto vf_fail = [&](const std::string& reason) {
      *error = where(v, -1) + ": " + reason;
      return false;
    };
    std::string canonical;
    if (!parse_pci_addr(vf.pci_addr, &canonical)) {
      return vf_fail("bad PCI address '" + vf.pci_addr + "'");
    }
    if (!remember(&pcis, canonical)) return vf_fail("duplicate PCI address " + canonical);
    if (vf.ports.empty()) return vf_fail("VF " + canonical + " has no port");
    if (vf.ports.size() > kMaxPortsPerVf) {
      return vf_fail("VF " + canonical + " has " + std::to_string(vf.ports.size()) +
                     " ports (at most 8)");
    }
    for (size_t p = 0; p < vf.ports.size(); ++p) {
      const PortConfig& port = vf.ports[p];
      auto port_fail = [&](const std::string& reason) {
        *error = where(v, static_cast<int>(p)) + ": " + reason;
        return false;
      };
      std::string mac = format_mac(port.mac);
      if (port.mac[0] & 1) return port_fail("MAC " + mac + " is a multicast address");
      if (port.mac == MacAddress{}) return port_fail("MAC 00:00:00:00:00:00 is not valid");
      if (!remember(&macs, mac)) return port_fail("duplicate MAC " + mac);
      std::string wire_error;
      if (!is_plain_value(port.ifname) || port.ifname.size() > 15 ||
          port.ifname.find('/') != std::string::npos) {
        return port_fail("bad interface name '" + port.ifname + "'");
      }
      if (!remember(&ifnames, port.ifname)) return port_fail("duplicate ifname " + port.ifname);
      if (!port.netvsc.empty()) {
        if (!is_plain_value(port.netvsc) || port.netvsc.size() > 15 ||
            port.netvsc.find('/') != std::string::npos) {
          return port_fail("bad netvsc interface name '" + port.netvsc + "'");
        }
        if (!remember(&ifnames, port.netvsc)) return port_fail("duplicate ifname " + port.netvsc);
        if (port.uio_netvsc)
          return port_fail(
              "a synthetic NIC is bound to hv_netvsc (netvsc) or to uio_hv_generic "
              "(uio_netvsc), not both");
      }
      if (!check_wire_spec(port.wire, &wire_error)) return port_fail(wire_error);
      if (port.wire.starts_with("tap:") && !remember(&taps, port.wire)) {
        return port_fail("wire " + port.wire + " is used by another port (one TAP per port)");
      }
      if (!check_port_ip(port, &fabric_ips, &wire_error)) return port_fail(wire_error);
      if (port.wire == "pair") {
        size_t partner = p ^ 1;
        if (partner >= vf.ports.size() || vf.ports[partner].wire != "pair") {
          return port_fail("wire pair joins ports " + std::to_string(p & ~size_t{1}) + " and " +
                           std::to_string(p | 1) + " of a VF: both need wire=pair");
        }
      }
    }
  }
  return true;
}

bool parse_config(std::string_view text, const std::string& source, EmuConfig* out,
                  std::string* error) {
  EmuConfig config;
  ConfigParser parser(source, &config);
  if (!parser.parse(text, error)) return false;
  *out = std::move(config);
  return true;
}

bool load_config(const std::string& path, EmuConfig* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path, out, error);
}

std::string format_config(const EmuConfig& config) {
  std::ostringstream out;
  out << "# mana-emu run configuration (see doc/emulator.md)\n";
  out << "root=" << config.root << "\n";
  out << "doorbell=" << (config.doorbell == EmuConfig::kPoll ? "poll" : "trap") << "\n";
  out << "control=" << config.control << "\n";
  out << "device_split=" << (config.device_split ? 1 : 0) << "\n";
  out << "limits=" << (config.limits == EmuConfig::kLimits2025 ? "2025" : "6.2") << "\n";
  if (config.device_cpu >= 0) out << "device_cpu=" << config.device_cpu << "\n";
  // Setup faults only when injected (doc/emulator.md "Kernel setup faults").
  if (!config.kernel.mana_ib) out << "mana_ib=0\n";
  if (!config.kernel.ib_uverbs) out << "ib_uverbs=0\n";
  if (config.kernel.driver_id != kRdmaDriverMana)
    out << "driver_id=" << config.kernel.driver_id << "\n";
  out << "hw";
  for (const std::string& word : format_hw_options(config.hw)) out << " " << word;
  out << "\n";
  for (const VfConfig& vf : config.vfs) {
    out << "vf pci=" << vf.pci_addr << " coalesce=" << (vf.rx_coalescing ? 1 : 0)
        << " anti_spoof=" << (vf.anti_spoof ? 1 : 0);
    if (vf.tx_pps != 0) out << " tx_pps=" << vf.tx_pps;
    out << "\n";
    for (const PortConfig& port : vf.ports) {
      out << "port mac=" << format_mac(port.mac) << " ifname=" << port.ifname
          << " up=" << (port.netdev_up ? 1 : 0) << " wire=" << port.wire;
      if (port.ipv4 != Ipv4Address{}) out << " ip=" << format_ipv4(port.ipv4);
      if (!port.netvsc.empty()) out << " netvsc=" << port.netvsc;
      if (port.uio_netvsc) out << " uio_netvsc=1";
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace mana::emu
