// SPDX-License-Identifier: BSD-3-Clause
// MTU setting (doc/guide.md "MTU"): standard frames only.
#pragma once

#include <cstdint>

struct rte_eth_dev;

namespace mana {

// Accepts an MTU in [RTE_ETHER_MIN_MTU, kMaxMtu]; -EINVAL with one error line otherwise.
int mtu_set(rte_eth_dev* dev, uint16_t mtu);

}  // namespace mana
