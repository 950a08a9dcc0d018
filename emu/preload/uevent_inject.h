// SPDX-License-Identifier: BSD-3-Clause
// The kernel's device events for the emulated devices (doc/emulator.md "The synthetic NIC"): a
// NETLINK_KOBJECT_UEVENT socket opened while synthetic NICs are emulated is a local datagram
// socket that only the emulator writes to, so a PCI hot-add reaches DPDK's EAL device-event
// monitor (which net_netvsc starts) without touching the machine's real uevent listeners.
#pragma once

#include <string>

namespace mana::emu::preload {

// Sends `ACTION=add SUBSYSTEM=pci PCI_SLOT_NAME=<pci>` to every emulated uevent socket.
void inject_pci_add_uevent(const std::string& pci);

}  // namespace mana::emu::preload
