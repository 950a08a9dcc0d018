// SPDX-License-Identifier: BSD-3-Clause
// The ethdev operation tables of a port (primary and secondary processes).
#pragma once

#include <ethdev_driver.h>
#include <infiniband/verbs.h>

#include "priv.h"

namespace mana {

const eth_dev_ops* primary_dev_ops();
const eth_dev_ops* secondary_dev_ops();

// Releases the port's MRs, interrupt handler, PDs and verbs context (probe.cpp).
void close_port_resources(PortPriv& priv);
// Releases the interrupt handler, PDs and verbs context only (probe.cpp).
void close_port_verbs(PortPriv& priv);
// Opens the verbs context, PD and parent domain of priv.ib_port on `ibdev` (probe.cpp). 0 or
// negative errno (logged); what was opened stays for close_port_verbs.
int open_port_verbs(PortPriv& priv, ibv_device* ibdev);
// Queries `ibdev`; false (logged) when it is not a usable Ethernet device (probe.cpp).
bool query_ethernet_device(ibv_device* ibdev, const char* name, ibv_device_attr_ex* attr);

// Closes every queue's gate and waits for bursts inside (queue_gate.h); opens those of the queues
// in state started.
void close_port_gates(rte_eth_dev* dev);
void open_port_gates(rte_eth_dev* dev);
int link_update(rte_eth_dev* dev, int wait_to_complete);

}  // namespace mana
