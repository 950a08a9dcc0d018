// SPDX-License-Identifier: BSD-3-Clause
#include "port_owner.h"

#include <rte_ethdev.h>

namespace mana {

bool owned_by_another_driver(uint16_t port_id) {
  rte_eth_dev_owner owner{};
  return rte_eth_dev_owner_get(port_id, &owner) == 0 && owner.id != RTE_ETH_DEV_NO_OWNER;
}

}  // namespace mana
