#include "probe.h"

#include <cerrno>

#include <bus_pci_driver.h>
#include <rte_devargs.h>

#include "devargs.h"
#include "mana_log.h"

namespace mana {

int probe_pci_device(rte_pci_device* pci) {
  const char* args = pci->device.devargs ? pci->device.devargs->args : nullptr;
  Devargs devargs;
  char error[256];
  if (int rc = parse_devargs(args, devargs, error, sizeof(error)); rc != 0) {
    MANA_INIT_LOG(ERR, "%s: %s", pci->name, error);
    return rc;
  }
  MANA_INIT_LOG(INFO, "%s: %u mac= devargs", pci->name, devargs.mac_count);
  // Port discovery through rdma-core comes with the control path (issue 4).
  MANA_INIT_LOG(ERR, "%s: port discovery is not implemented in this build", pci->name);
  return -ENODEV;
}

int remove_pci_device(rte_pci_device* /*pci*/) { return 0; }

}  // namespace mana
