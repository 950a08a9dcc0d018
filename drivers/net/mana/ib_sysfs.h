// SPDX-License-Identifier: BSD-3-Clause
// The sysfs contract of doc/hardware.md §2.2, read through ibv_device::ibdev_path: which PCI
// function an RDMA device belongs to, and which netdev (name, MAC) is each of its ports.
#pragma once

#include <net/if.h>

#include <cstddef>

#include <rte_ether.h>
#include <rte_pci.h>

namespace mana {

// PCI_SLOT_NAME of <ibdev_path>/device/uevent. 0, or -ENOENT when the file or the line is missing
// (never a match), -EINVAL when the address is malformed.
int ib_device_pci_addr(const char* ibdev_path, rte_pci_addr* out);

struct PortNetdev {
  char ifname[IF_NAMESIZE];
  rte_ether_addr mac;
};

// The netdev of IB port `ib_port` (1-based): the one under <ibdev_path>/device/net whose dev_port
// is ib_port - 1. 0, or -ENOENT.
int ib_port_netdev(const char* ibdev_path, unsigned ib_port, PortNetdev* out);

// The IB port (1-based) whose netdev has `mac`, and that netdev. 0, or -ENOENT.
int ib_port_by_mac(const char* ibdev_path, const rte_ether_addr& mac, unsigned* ib_port,
                   PortNetdev* out);

// Writes "eth1 00:0d:3a:..., eth2 ..." (every netdev of the function) into `buf`.
void list_port_macs(const char* ibdev_path, char* buf, size_t len);

}  // namespace mana
