// SPDX-License-Identifier: BSD-3-Clause
// The sysfs view of the emulated VFs under the run folder R (contract: doc/emulator.md "The run
// folder contract"): R/sys/bus/pci/devices/<bdf>/ for DPDK's PCI bus (SYSFS_PCI_DEVICES) and
// R/sys/class/infiniband/<ibdev>/ for the ibdev_path of the emulated ibv_devices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace mana::emu {

// One emulated RDMA device, in the order the device list (and uverbs<k> numbering) uses: VF by VF;
// with the device split the Ethernet device manae_<n> comes before the RNIC device mana_<n>.
struct IbDeviceInfo {
  enum Kind { kCombined, kEthernet, kRnic };
  std::string name;  // mana_<n> or manae_<n>
  uint32_t vf;       // index into EmuConfig::vfs
  Kind kind;
  uint32_t vendor_part_id;  // 0 (combined), 2 (Ethernet), 3 (RNIC)
};
std::vector<IbDeviceInfo> ib_devices(const EmuConfig& config);

std::string pci_devices_dir(const std::string& root);  // R/sys/bus/pci/devices
std::string pci_device_dir(const EmuConfig& config, uint32_t vf);
std::string ib_device_dir(const std::string& root, const std::string& ibdev);
std::string uverbs_dir(const std::string& root, uint32_t index);

// Writes the whole tree for `config` under config.root (which must exist).
bool write_sysfs_tree(const EmuConfig& config, std::string* error);

// Hot removal: moves the VF's PCI folder and its RDMA device folders to R/removed/ (present=false)
// and back (present=true). Moving to the state the VF is already in is an error. `new_pci` (add
// only, canonical form): the function comes back at that PCI address, as Azure may re-add a VF on
// another bus; config.vfs[vf].pci_addr follows, the RDMA devices keep their names.
// `with_rdma` false (add only): the RDMA device folders stay in R/removed/ until add_vf_rdma, as
// mana_ib registers them after the kernel's mana driver brought the function back.
// `with_netdevs` false (add only, implies !with_rdma): the function's netdev folders stay in
// R/removed/net/<vf> until add_vf_netdevs, as the kernel's mana driver registers them a while after
// the function appears (doc/hardware.md §9.25).
bool set_vf_present(EmuConfig& config, uint32_t vf, bool present, std::string* error,
                    const std::string& new_pci = {}, bool with_rdma = true,
                    bool with_netdevs = true);
// The netdevs of a function added without them. `kernel_names`: each appears as the lowest free
// eth<k> (config's ifname becomes it) and `final_names` gets the names udev gives them after
// (rename_netdev); else they appear under their names.
bool add_vf_netdevs(EmuConfig& config, uint32_t vf, bool kernel_names,
                    std::vector<std::string>* final_names, std::string* error);
bool vf_netdevs_pending(const EmuConfig& config, uint32_t vf);
bool add_vf_rdma(EmuConfig& config, uint32_t vf, std::string* error);
// The VF's PCI function is back but its RDMA devices are not (set_vf_present without them).
bool vf_rdma_pending(const EmuConfig& config, uint32_t vf);
bool vf_present(const EmuConfig& config, uint32_t vf);

// Writes `up`/`down` to the port's net/<ifname>/operstate and its `flags` (IFF_UP or not), also
// while the VF is removed or its netdevs are not registered yet.
bool set_operstate(const EmuConfig& config, uint32_t vf, uint32_t port, bool up,
                   std::string* error);
// The NIC's link event for one port (doc/hardware.md §9.24): net/<ifname>/carrier 1 or 0, and its
// operstate `up` only with the carrier on and the netdev up (also while the VF is removed).
bool set_link(const EmuConfig& config, uint32_t vf, uint32_t port, bool carrier, bool netdev_up,
              std::string* error);
// The kernel renames the port's netdev (udev does so on Azure, also while the VF is away): its
// folder under the PCI function, its /sys/class/net link and the synthetic interface's lower_
// link follow; config.vfs[vf].ports[port].ifname becomes `name`.
bool rename_netdev(EmuConfig& config, uint32_t vf, uint32_t port, const std::string& name,
                   std::string* error);
// Writes `value` to the port's net/<ifname>/statistics/<name> in one step (a reader sees the old
// or the new value, never an empty file), also while the VF is removed or its netdevs are not
// registered yet.
bool set_netdev_stat(const EmuConfig& config, uint32_t vf, uint32_t port, const std::string& name,
                     uint64_t value, std::string* error);

}  // namespace mana::emu
