// SPDX-License-Identifier: BSD-3-Clause
// Registration of net_mana as a PCI driver for the MANA VF (1414:00ba) and PF (1414:00b9).
//
// The device stays bound to the kernel: no BAR mapping (no RTE_PCI_DRV_NEED_MAPPING); everything
// goes through rdma-core. A PCI driver (not a vdev driver) is what makes Azure's documented
// `--vdev="<pci>,mac=<mac>"` work: DPDK 22.11 hands a devargs whose name is a PCI address to the
// PCI bus.
#include <cerrno>

#include <bus_pci_driver.h>
#include <ethdev_driver.h>
#include <ethdev_pci.h>

#include "devargs.h"
#include "dpdk_compat.h"
#include "mana_log.h"
#include "probe.h"
#include "single_instance.h"

namespace {

constexpr uint16_t kPciVendorMicrosoft = 0x1414;
constexpr uint16_t kPciDeviceManaVf = 0x00BA;
constexpr uint16_t kPciDeviceManaPf = 0x00B9;

int mana_pci_probe(rte_pci_driver* /*drv*/, rte_pci_device* pci) {
  return mana::probe_pci_device(pci);
}

int mana_pci_remove(rte_pci_device* pci) { return mana::remove_pci_device(pci); }

}  // namespace

static const rte_pci_id mana_pci_id_map[] = {
    {RTE_CLASS_ANY_ID, kPciVendorMicrosoft, kPciDeviceManaVf, RTE_PCI_ANY_ID, RTE_PCI_ANY_ID},
    {RTE_CLASS_ANY_ID, kPciVendorMicrosoft, kPciDeviceManaPf, RTE_PCI_ANY_ID, RTE_PCI_ANY_ID},
    {0, 0, 0, 0, 0},
};

static rte_pci_driver mana_pci_driver = [] {
  rte_pci_driver d{};
  d.id_table = mana_pci_id_map;
  d.probe = mana_pci_probe;
  d.remove = mana_pci_remove;
  d.drv_flags = RTE_PCI_DRV_INTR_RMV;
  return d;
}();

// RTE_PMD_REGISTER_PCI, except that a second copy of this driver in the process (the installed
// package next to a -d plugin) says so in one line and stays out of the PCI bus: two drivers named
// net_mana would otherwise both be registered, the first probing and the second silently unused.
// The EAL loads -d plugins before its plugin folder, so the -d copy is the one that drives.
RTE_INIT(mana_pci_register) {
  const std::string other = mana::other_loaded_copy();
  if (!other.empty()) {
    MANA_INIT_LOG(WARNING,
                  "%s is not used: another copy of net_mana, %s, was loaded first and drives the "
                  "devices (the installed package and a -d plugin?)",
                  mana::this_copy_path().c_str(), other.c_str());
    return;
  }
  mana_pci_driver.driver.name = "net_mana";
  rte_pci_register(&mana_pci_driver);
}
MANA_PMD_EXPORT_NAME(net_mana);
RTE_PMD_REGISTER_PCI_TABLE(net_mana, mana_pci_id_map);
RTE_PMD_REGISTER_PARAM_STRING(
    net_mana, "mac=<mac_addr> recovery_timeout=<seconds> tx_stall_timeout=<seconds>");
RTE_PMD_REGISTER_KMOD_DEP(net_mana, "* ib_uverbs & mana_ib");
