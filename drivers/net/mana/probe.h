// SPDX-License-Identifier: BSD-3-Clause
// Probe and removal of one MANA PCI function: one ethdev per (selected) port.
#pragma once

struct rte_pci_device;

namespace mana {

int probe_pci_device(rte_pci_device* pci);
int remove_pci_device(rte_pci_device* pci);

}  // namespace mana
