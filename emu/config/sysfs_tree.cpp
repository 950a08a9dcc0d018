// SPDX-License-Identifier: BSD-3-Clause
#include "config/sysfs_tree.h"

#include <cstdio>

#include "config/fs_util.h"
#include "config/vmbus_tree.h"

namespace mana::emu {

namespace {

std::string removed_pci_dir(const EmuConfig& config, uint32_t vf) {
  return config.root + "/removed/pci/" + config.vfs[vf].pci_addr;
}

std::string removed_ib_dir(const std::string& root, const std::string& ibdev) {
  return root + "/removed/infiniband/" + ibdev;
}

std::string pci_uevent(const std::string& pci_addr) {
  return "DRIVER=mana\nPCI_CLASS=20000\nPCI_ID=1414:00BA\nPCI_SUBSYS_ID=1414:0001\nPCI_SLOT_NAME=" +
         pci_addr;
}

// The netdev's sysfs `flags` (IFF_UP | IFF_BROADCAST | IFF_MULTICAST, without IFF_UP while down).
std::string netdev_flags(bool up) { return up ? "0x1003" : "0x1002"; }

std::string removed_net_dir(const EmuConfig& config, uint32_t vf) {
  return config.root + "/removed/net/" + std::to_string(vf);
}

// Builds files one after the other, keeping the first error.
class TreeWriter {
 public:
  explicit TreeWriter(std::string* error) : error_(error) {}
  bool ok() const { return ok_; }
  void dir(const std::string& path) {
    if (ok_) ok_ = make_dirs(path, error_);
  }
  void file(const std::string& path, const std::string& line) {
    if (ok_) ok_ = write_file(path, line + "\n", error_);
  }
  void symlink(const std::string& target, const std::string& link) {
    if (ok_) ok_ = make_symlink(target, link, error_);
  }

 private:
  std::string* error_;
  bool ok_ = true;
};

void write_pci_device(const EmuConfig& config, uint32_t vf, TreeWriter* w) {
  const VfConfig& cfg = config.vfs[vf];
  const std::string dir = pci_device_dir(config, vf);
  w->dir(dir);
  w->file(dir + "/vendor", "0x1414");
  w->file(dir + "/device", "0x00ba");
  w->file(dir + "/subsystem_vendor", "0x1414");
  w->file(dir + "/subsystem_device", "0x0001");
  w->file(dir + "/class", "0x020000");
  w->file(dir + "/numa_node", "0");
  std::string resource;
  for (int i = 0; i < 6; ++i) {
    resource +=
        std::string(i ? "\n" : "") + "0x0000000000000000 0x0000000000000000 0x0000000000000000";
  }
  w->file(dir + "/resource", resource);
  w->file(dir + "/uevent", pci_uevent(cfg.pci_addr));
  w->symlink(config.root + "/sys/bus/pci/drivers/mana", dir + "/driver");
  for (size_t p = 0; p < cfg.ports.size(); ++p) {
    const PortConfig& port = cfg.ports[p];
    const std::string net = dir + "/net/" + port.ifname;
    w->dir(net);
    w->file(net + "/address", format_mac(port.mac));
    w->file(net + "/dev_port", std::to_string(p));
    w->file(net + "/operstate", port.netdev_up ? "up" : "down");
    w->file(net + "/flags", netdev_flags(port.netdev_up));
    // The netdev's MTU: the driver writes it (as root does on Azure), the vPort follows it.
    w->file(net + "/mtu", std::to_string(cfg.limits.mtu));
    // The link as the kernel shows it (doc/hardware.md §9.24): the speed the NIC reports, the
    // carrier flag (on from probe since Linux 6.19, the NIC's link events turn it off and on:
    // `mana-emu ctl link`; before, on while the netdev is up). The library answers a read of
    // either with EINVAL while `flags` says the netdev is down, as the kernel does.
    w->file(net + "/speed", std::to_string(cfg.hw.link_speed_mbps));
    w->file(net + "/carrier", cfg.hw.link_events || port.netdev_up ? "1" : "0");
    // The kernel's counter of the function's no-WQE drops (doc/hardware.md §2.11).
    w->dir(net + "/statistics");
    w->file(net + "/statistics/rx_missed_errors", "0");
  }
}

// /sys/class/net: a link per VF netdev and, for a port with `netvsc`, its synthetic interface as
// Hyper-V's hv_netvsc makes it (same MAC, VF enslaved: `lower_<vf>` and the VF's `master`), on a
// VMBus device bound to hv_netvsc. The synthetic interface starts in the VF netdev's state.
void write_class_net(const EmuConfig& config, uint32_t vf, TreeWriter* w) {
  const std::string class_net = config.root + "/sys/class/net";
  const std::string vmbus = config.root + "/sys/bus/vmbus";
  w->dir(class_net);
  const VfConfig& cfg = config.vfs[vf];
  for (size_t p = 0; p < cfg.ports.size(); ++p) {
    const PortConfig& port = cfg.ports[p];
    const std::string vf_net = pci_device_dir(config, vf) + "/net/" + port.ifname;
    w->symlink(vf_net, class_net + "/" + port.ifname);
    if (port.netvsc.empty()) continue;
    const std::string dev = vmbus + "/devices/" + vmbus_device_uuid(vf, static_cast<uint32_t>(p));
    const std::string net = class_net + "/" + port.netvsc;
    w->dir(vmbus + "/drivers/hv_netvsc");
    w->dir(dev);
    w->symlink(vmbus + "/drivers/hv_netvsc", dev + "/driver");
    w->dir(net);
    w->file(net + "/address", format_mac(port.mac));
    w->file(net + "/operstate", port.netdev_up ? "up" : "down");
    w->file(net + "/flags", netdev_flags(port.netdev_up));
    // hv_netvsc reports the speed of its VF (doc/hardware.md §9.24); its carrier is the host's.
    w->file(net + "/speed", std::to_string(cfg.hw.link_speed_mbps));
    w->file(net + "/carrier", "1");
    w->symlink(dev, net + "/device");
    w->symlink(class_net + "/" + port.ifname, net + "/lower_" + port.ifname);
    w->symlink(net, vf_net + "/master");
  }
}

// /sys/module/<name> exists for a loaded module.
void write_modules(const EmuConfig& config, TreeWriter* w) {
  const std::string modules = config.root + "/sys/module/";
  w->dir(modules + "mana");
  if (config.kernel.mana_ib) w->dir(modules + "mana_ib");
  if (config.kernel.ib_uverbs) w->dir(modules + "ib_uverbs");
}

}  // namespace

std::vector<IbDeviceInfo> ib_devices(const EmuConfig& config) {
  std::vector<IbDeviceInfo> devices;
  for (uint32_t vf = 0; vf < config.vfs.size(); ++vf) {
    const std::string n = std::to_string(vf);
    if (config.device_split) {
      devices.push_back({"manae_" + n, vf, IbDeviceInfo::kEthernet, 2});
      devices.push_back({"mana_" + n, vf, IbDeviceInfo::kRnic, 3});
    } else {
      devices.push_back({"mana_" + n, vf, IbDeviceInfo::kCombined, 0});
    }
  }
  return devices;
}

std::string pci_devices_dir(const std::string& root) { return root + "/sys/bus/pci/devices"; }

std::string pci_device_dir(const EmuConfig& config, uint32_t vf) {
  return pci_devices_dir(config.root) + "/" + config.vfs[vf].pci_addr;
}

std::string ib_device_dir(const std::string& root, const std::string& ibdev) {
  return root + "/sys/class/infiniband/" + ibdev;
}

std::string uverbs_dir(const std::string& root, uint32_t index) {
  return root + "/sys/class/infiniband_verbs/uverbs" + std::to_string(index);
}

bool write_sysfs_tree(const EmuConfig& config, std::string* error) {
  TreeWriter w(error);
  w.dir(config.root + "/sys/bus/pci/drivers/mana");
  w.dir(pci_devices_dir(config.root));
  for (uint32_t vf = 0; vf < config.vfs.size(); ++vf) {
    write_pci_device(config, vf, &w);
    write_class_net(config, vf, &w);
  }
  write_modules(config, &w);
  if (w.ok() && !write_vmbus_tree(config, error)) return false;
  // RDMA devices exist with mana_ib, their uverbs devices with ib_uverbs too.
  const auto devices = config.kernel.mana_ib ? ib_devices(config) : std::vector<IbDeviceInfo>{};
  for (uint32_t k = 0; k < devices.size(); ++k) {
    const std::string dir = ib_device_dir(config.root, devices[k].name);
    w.dir(dir);
    w.file(dir + "/node_type", "1: CA");
    w.symlink(pci_device_dir(config, devices[k].vf), dir + "/device");
    if (!config.kernel.ib_uverbs) continue;
    w.dir(uverbs_dir(config.root, k));
    w.file(uverbs_dir(config.root, k) + "/ibdev", devices[k].name);
  }
  return w.ok();
}

bool vf_present(const EmuConfig& config, uint32_t vf) {
  return vf < config.vfs.size() && path_exists(pci_device_dir(config, vf));
}

namespace {

// The folder that holds the VF's netdev folders, wherever they are: with the removed function,
// under R/removed/net/<vf> while the function is back and its netdevs are not yet registered
// (doc/hardware.md §9.25), else under the live function. With "/" at the end.
std::string netdevs_dir(const EmuConfig& config, uint32_t vf) {
  if (!vf_present(config, vf)) return removed_pci_dir(config, vf) + "/net/";
  if (vf_netdevs_pending(config, vf)) return removed_net_dir(config, vf) + "/";
  return pci_device_dir(config, vf) + "/net/";
}

}  // namespace

bool set_vf_present(EmuConfig& config, uint32_t vf, bool present, std::string* error,
                    const std::string& new_pci, bool with_rdma, bool with_netdevs) {
  if (vf >= config.vfs.size()) {
    *error = "no VF " + std::to_string(vf);
    return false;
  }
  if (vf_present(config, vf) == present) {
    *error = "VF " + std::to_string(vf) + (present ? " is present" : " is already removed");
    return false;
  }
  const bool moves = present && !new_pci.empty() && new_pci != config.vfs[vf].pci_addr;
  if (moves) {
    for (const VfConfig& other : config.vfs) {
      if (other.pci_addr == new_pci) {
        *error = "PCI address " + new_pci + " is taken by another VF";
        return false;
      }
    }
  }
  const std::string pci_gone = removed_pci_dir(config, vf);
  if (moves) config.vfs[vf].pci_addr = new_pci;  // the function comes back on another slot
  const std::string pci_live = pci_device_dir(config, vf);
  if (!(present ? move_path(pci_gone, pci_live, error) : move_path(pci_live, pci_gone, error))) {
    return false;
  }
  TreeWriter w(error);
  if (moves) w.file(pci_live + "/uevent", pci_uevent(new_pci));
  // The function without its netdevs: they wait in R/removed/net/<vf> (add_vf_netdevs).
  if (present && !with_netdevs &&
      !(make_dirs(config.root + "/removed/net", error) &&
        move_path(pci_live + "/net", removed_net_dir(config, vf), error)))
    return false;
  for (const IbDeviceInfo& dev : ib_devices(config)) {
    if (dev.vf != vf || !config.kernel.mana_ib || (present && !with_rdma)) continue;
    const std::string live = ib_device_dir(config.root, dev.name);
    const std::string gone = removed_ib_dir(config.root, dev.name);
    if (!(present ? move_path(gone, live, error) : move_path(live, gone, error))) return false;
    if (moves &&
        !(remove_tree(live + "/device", error) && make_symlink(pci_live, live + "/device", error)))
      return false;
  }
  return w.ok();
}

bool vf_netdevs_pending(const EmuConfig& config, uint32_t vf) {
  return vf < config.vfs.size() && path_exists(removed_net_dir(config, vf));
}

bool add_vf_netdevs(EmuConfig& config, uint32_t vf, bool kernel_names,
                    std::vector<std::string>* final_names, std::string* error) {
  const std::string net = pci_device_dir(config, vf) + "/net";
  if (!move_path(removed_net_dir(config, vf), net, error)) return false;
  final_names->clear();
  const std::string class_net = config.root + "/sys/class/net/";
  for (PortConfig& port : config.vfs[vf].ports) {
    final_names->push_back(port.ifname);
    if (!kernel_names) continue;
    // The kernel's name: the lowest eth<k> no interface has (register_netdev's "eth%d").
    std::string name;
    for (unsigned k = 0; name.empty(); ++k)
      if (!path_exists(class_net + "eth" + std::to_string(k)) &&
          !path_exists(net + "/eth" + std::to_string(k)))
        name = "eth" + std::to_string(k);
    if (!move_path(net + "/" + port.ifname, net + "/" + name, error)) return false;
    // /sys/class/net and the synthetic interface's lower_ link name it (rename_netdev renames).
    if (!remove_tree(class_net + port.ifname, error) ||
        !make_symlink(net + "/" + name, class_net + name, error))
      return false;
    if (!port.netvsc.empty() &&
        !(remove_tree(class_net + port.netvsc + "/lower_" + port.ifname, error) &&
          make_symlink(class_net + name, class_net + port.netvsc + "/lower_" + name, error)))
      return false;
    port.ifname = name;
  }
  return true;
}

bool vf_rdma_pending(const EmuConfig& config, uint32_t vf) {
  if (!vf_present(config, vf) || !config.kernel.mana_ib) return false;
  for (const IbDeviceInfo& dev : ib_devices(config))
    if (dev.vf == vf && path_exists(removed_ib_dir(config.root, dev.name))) return true;
  return false;
}

bool add_vf_rdma(EmuConfig& config, uint32_t vf, std::string* error) {
  for (const IbDeviceInfo& dev : ib_devices(config)) {
    if (dev.vf != vf) continue;
    const std::string live = ib_device_dir(config.root, dev.name);
    if (!move_path(removed_ib_dir(config.root, dev.name), live, error)) return false;
    // The function may have come back at another address (add --pci) before: follow it.
    if (!(remove_tree(live + "/device", error) &&
          make_symlink(pci_device_dir(config, vf), live + "/device", error)))
      return false;
  }
  return true;
}

bool set_operstate(const EmuConfig& config, uint32_t vf, uint32_t port, bool up,
                   std::string* error) {
  if (vf >= config.vfs.size() || port >= config.vfs[vf].ports.size()) {
    *error = "no port " + std::to_string(port) + " on VF " + std::to_string(vf);
    return false;
  }
  const std::string net = netdevs_dir(config, vf) + config.vfs[vf].ports[port].ifname;
  return write_file(net + "/operstate", up ? "up\n" : "down\n", error) &&
         write_file(net + "/flags", netdev_flags(up) + "\n", error);
}

bool set_link(const EmuConfig& config, uint32_t vf, uint32_t port, bool carrier, bool netdev_up,
              std::string* error) {
  if (vf >= config.vfs.size() || port >= config.vfs[vf].ports.size()) {
    *error = "no port " + std::to_string(port) + " on VF " + std::to_string(vf);
    return false;
  }
  const std::string base = netdevs_dir(config, vf) + config.vfs[vf].ports[port].ifname;
  return write_file(base + "/carrier", carrier ? "1\n" : "0\n", error) &&
         write_file(base + "/operstate", carrier && netdev_up ? "up\n" : "down\n", error);
}

bool rename_netdev(EmuConfig& config, uint32_t vf, uint32_t port, const std::string& name,
                   std::string* error) {
  if (vf >= config.vfs.size() || port >= config.vfs[vf].ports.size()) {
    *error = "no port " + std::to_string(port) + " on VF " + std::to_string(vf);
    return false;
  }
  PortConfig& p = config.vfs[vf].ports[port];
  const std::string class_net = config.root + "/sys/class/net/";
  if (name.empty() || name.size() > 15 || name.find('/') != std::string::npos || name[0] == '.' ||
      path_exists(class_net + name)) {
    *error = "bad or taken interface name '" + name + "' (1..15 characters, unique)";
    return false;
  }
  const std::string base = netdevs_dir(config, vf);
  const std::string live = pci_device_dir(config, vf) + "/net/" + name;
  if (!move_path(base + p.ifname, base + name, error) ||
      !remove_tree(class_net + p.ifname, error) || !make_symlink(live, class_net + name, error))
    return false;
  // hv_netvsc's synthetic interface names its VF in a lower_<ifname> link.
  if (!p.netvsc.empty() &&
      !(remove_tree(class_net + p.netvsc + "/lower_" + p.ifname, error) &&
        make_symlink(class_net + name, class_net + p.netvsc + "/lower_" + name, error)))
    return false;
  p.ifname = name;
  return true;
}

bool set_netdev_stat(const EmuConfig& config, uint32_t vf, uint32_t port, const std::string& name,
                     uint64_t value, std::string* error) {
  if (vf >= config.vfs.size() || port >= config.vfs[vf].ports.size()) {
    *error = "no port " + std::to_string(port) + " on VF " + std::to_string(vf);
    return false;
  }
  const std::string path =
      netdevs_dir(config, vf) + config.vfs[vf].ports[port].ifname + "/statistics/" + name;
  const std::string tmp = path + ".new";
  return write_file(tmp, std::to_string(value) + "\n", error) && move_path(tmp, path, error);
}

}  // namespace mana::emu
