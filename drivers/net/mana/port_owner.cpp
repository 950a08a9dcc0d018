// SPDX-License-Identifier: BSD-3-Clause
#include "port_owner.h"

#include <cstdio>

#include <rte_ethdev.h>

namespace mana {

bool owned_by_another_driver(uint16_t port_id) {
  rte_eth_dev_owner owner{};
  return rte_eth_dev_owner_get(port_id, &owner) == 0 && owner.id != RTE_ETH_DEV_NO_OWNER;
}

bool port_owner_name(uint16_t port_id, char* buf, size_t len) {
  rte_eth_dev_owner owner{};
  if (len != 0) buf[0] = '\0';
  if (rte_eth_dev_owner_get(port_id, &owner) != 0 || owner.id == RTE_ETH_DEV_NO_OWNER) return false;
  snprintf(buf, len, "%s", owner.name[0] != '\0' ? owner.name : "another driver");
  return true;
}

const char* owner_removal_note(uint16_t port_id, char* buf, size_t len) {
  char name[RTE_ETH_MAX_OWNER_NAME_LEN];
  if (!port_owner_name(port_id, name, sizeof(name))) {
    if (len != 0) buf[0] = '\0';
    return buf;
  }
  snprintf(buf, len,
           "; the port's owner (%s) is told (RTE_ETH_EVENT_INTR_RMV) and handles the removal: "
           "DPDK's netvsc PMD moves traffic to its synthetic path, closes this port and probes "
           "the VF again when it is back",
           name);
  return buf;
}

}  // namespace mana
