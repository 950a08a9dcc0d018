// SPDX-License-Identifier: BSD-3-Clause
// Multi-process support (doc/hardware.md §3.6) over the rte_mp action "net_mana_mp": a secondary
// attaches to the primary's ports, gets the verbs cmd fd to map the same doorbell page, asks the
// primary to register memory, and follows the primary's start/stop of the data path.
#pragma once

struct eth_dev_ops;
struct rte_eth_dev;
struct rte_pci_device;

namespace mana {

// Registers the action in the primary (reference-counted per probed PCI function).
int mp_init_primary();
void mp_uninit_primary();

// In a secondary: attaches the ethdev `name` created by the primary, with the operations `ops`.
// 0 or negative errno.
int mp_attach_secondary(rte_pci_device* pci, const char* name, const eth_dev_ops* ops);

// In the primary: tells secondaries to install (or remove) the burst functions of `dev`.
void mp_notify_secondaries_start(rte_eth_dev* dev);
void mp_notify_secondaries_stop(rte_eth_dev* dev);
// In the primary, after a recovery (recovery.h): secondaries map the new context's doorbell page.
void mp_notify_secondaries_remap(rte_eth_dev* dev);

// In a secondary: unmaps the doorbell page of a port being closed.
void mp_detach_secondary(rte_eth_dev* dev);

}  // namespace mana
