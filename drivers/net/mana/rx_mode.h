// SPDX-License-Identifier: BSD-3-Clause
// Receive modes as the vPort has them (doc/hardware.md §4.10): no receive filter can be
// programmed; group frames that reach the vPort are delivered, so all-multicast is on from probe.
#pragma once

#include <rte_ethdev.h>

namespace mana {

// At probe: the port reports all-multicast on.
void rx_mode_init(rte_eth_dev* dev);
int allmulticast_enable(rte_eth_dev* dev);
int allmulticast_disable(rte_eth_dev* dev);

}  // namespace mana
