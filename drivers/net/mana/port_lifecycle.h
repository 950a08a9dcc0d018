// SPDX-License-Identifier: BSD-3-Clause
// A port's bring-up and teardown, one step at a time (doc/hardware.md §2.2-§2.4, §2.7): its verbs
// context, PD and parent domain; the hardware objects of all its queues, in the order the NIC
// needs; the gates that let bursts in; its link state. Probe, the ethdev operations, the queue
// operations and the recovery from a VF removal compose these steps; none of them runs here by
// itself.
#pragma once

#include <infiniband/verbs.h>

#include "priv.h"

struct rte_eth_dev;

namespace mana {

// ---- the device and its verbs objects ----

// The limits a device reports (ibv_query_device_ex).
DeviceCaps caps_of(const ibv_device_attr_ex& attr);
// Queries `ibdev`; false (logged) when it is not a usable Ethernet device.
bool query_ethernet_device(ibv_device* ibdev, const char* name, ibv_device_attr_ex* attr);
// Opens the verbs context, PD and parent domain of priv.ib_port on `ibdev`. 0 or negative errno
// (logged); what was opened stays for close_port_verbs.
int open_port_verbs(PortPriv& priv, ibv_device* ibdev);
// Releases the PDs and the verbs context (no-op for what is not open). The device events
// (recovery.h: intr_uninstall) must be unwatched first.
void close_port_verbs(PortPriv& priv);

// ---- the queues' hardware objects: the one sequence of dev_start, dev_stop, the recovery and
// the TX stall watchdog's reset ----

// Creates the objects of every queue: TX first, as the raw QPs configure the vPort that the RSS QP
// of the RX queues needs (doc/hardware.md §2.4), then RX. On failure nothing stays created. 0 or
// negative errno (logged).
int port_queues_create(rte_eth_dev* dev);
// Destroys them (the mbufs in flight are freed).
void port_queues_destroy(rte_eth_dev* dev);

// ---- the data path ----

// Closes every queue's gate and waits for bursts inside (queue_gate.h); opens those of the queues
// in state started.
void close_port_gates(rte_eth_dev* dev);
void open_port_gates(rte_eth_dev* dev);

}  // namespace mana
