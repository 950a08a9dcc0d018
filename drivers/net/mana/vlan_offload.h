// SPDX-License-Identifier: BSD-3-Clause
// VLAN stripping turned on or off at run time (rte_eth_dev_set_vlan_offload; testpmd's `vlan set
// strip`). The NIC always strips the outer tag (doc/hardware.md §9.13); the driver re-inserts it
// when stripping is off, so the switch only selects the RX burst variant.
#pragma once

#include <rte_ethdev.h>

namespace mana {

// vlan_offload_set: ethdev has already updated the port's RX offloads (and refused what the port
// does not offer); a started port takes the burst of its new offloads, secondaries too. 0.
int vlan_offload_set(rte_eth_dev* dev, int mask);

}  // namespace mana
