// SPDX-License-Identifier: BSD-3-Clause
// Whether another driver owns our port (rte_eth_dev_owner_set): DPDK's netvsc PMD takes its VF so,
// as failsafe and bonding take their sub-devices. The owner handles removals and the answers of
// the calls it makes on the port itself (doc/guide.md "Under DPDK's netvsc PMD").
#pragma once

#include <cstdint>

namespace mana {

bool owned_by_another_driver(uint16_t port_id);

}  // namespace mana
