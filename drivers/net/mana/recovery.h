// SPDX-License-Identifier: BSD-3-Clause
// Recovery from a VF removal and re-add, as Azure servicing does it (doc/guide.md "VF removal and
// recovery", doc/hardware.md §2.7). On IBV_EVENT_DEVICE_FATAL every queue's gate closes (bursts of
// every process return 0), the port raises RTE_ETH_EVENT_INTR_RMV (when intr_conf.rmv) and
// RTE_ETH_EVENT_ERR_RECOVERING; the old verbs objects are destroyed (uverbs frees them with the
// device), then an EAL alarm looks every 100 ms for an RDMA device whose port netdev has the
// port's MAC, at any PCI address. When it is back the context, PDs, MRs and (port started) every
// queue are created again from the port's configuration, secondaries map the new doorbell page,
// the gates open and RTE_ETH_EVENT_RECOVERY_SUCCESS follows; after `recovery_timeout` seconds
// RTE_ETH_EVENT_RECOVERY_FAILED. Every step runs on the EAL interrupt thread; dev_start, dev_stop
// and dev_close hold recovery off while they run (recovery_control_begin/end).
#pragma once

#include "recovery_state.h"

struct rte_eth_dev;

namespace mana {

// Device events (doc/hardware.md §2.7): the EAL interrupt thread watches the verbs async fd of
// the port's context; a fatal event (the VF is hot-removed) starts the recovery. Install once the
// context is open; uninstall before it closes (port_lifecycle.h).
int intr_install(rte_eth_dev* dev);
void intr_uninstall(PortPriv& priv);

// Interrupt thread, on IBV_EVENT_DEVICE_FATAL of the port's context.
void recovery_begin(rte_eth_dev* dev);

// dev_start/dev_stop/dev_close: waits for a recovery step that is running and keeps the next
// ones off until recovery_control_end (which re-arms recovery when the VF is still away).
void recovery_control_begin(rte_eth_dev* dev);
void recovery_control_end(rte_eth_dev* dev);
// dev_close: no recovery step runs for the port again.
void recovery_cancel(rte_eth_dev* dev);

// The TX stall watchdog's reset (tx_watchdog.h), on the interrupt thread: every queue of a started
// port is destroyed and created again from its configuration, as the kernel's queue reset does;
// the context, PD and MRs stay. 0, -EBUSY (nothing done) while a removal is recovered or the
// application starts or stops the port, or the errno of a re-creation that failed (logged; the
// port's gates stay closed, as after a failed recovery).
int recovery_reset_queues(rte_eth_dev* dev);

// The dev_reset operation (rte_eth_dev_reset, testpmd `port reset`), on a stopped port: every verbs
// object is destroyed and the VF with the port's MAC opened again, as a recovery does but at once
// (also after a recovery that failed, or with recovery_timeout=0). The queues' configuration
// stays; the application configures and sets up its queues again as after any reset. 0, or a
// negative errno (logged; the port stays stopped) when no such VF is there.
int dev_reset(rte_eth_dev* dev);

}  // namespace mana
