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
#include "mana_log.h"
#include "probe.h"

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

RTE_PMD_REGISTER_PCI(net_mana, mana_pci_driver);
RTE_PMD_REGISTER_PCI_TABLE(net_mana, mana_pci_id_map);
RTE_PMD_REGISTER_PARAM_STRING(net_mana, "mac=<mac_addr> recovery_timeout=<seconds>");
RTE_PMD_REGISTER_KMOD_DEP(net_mana, "* ib_uverbs & mana_ib");
