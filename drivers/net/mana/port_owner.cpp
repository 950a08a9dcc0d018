// SPDX-License-Identifier: BSD-3-Clause
#include "port_owner.h"

#include <cstdio>

#include <ethdev_driver.h>

namespace mana {
namespace {

// The owner ethdev keeps in the port's shared data, read as the driver reads the rest of it
// (owners change on control paths only); a port that is not in rte_eth_devices, as in the unit
// tests, has none.
const rte_eth_dev_owner* owner_of(uint16_t port_id) {
  if (port_id >= RTE_MAX_ETHPORTS) return nullptr;
  const rte_eth_dev_data* data = rte_eth_devices[port_id].data;
  if (data == nullptr || data->owner.id == RTE_ETH_DEV_NO_OWNER) return nullptr;
  return &data->owner;
}

}  // namespace

bool owned_by_another_driver(uint16_t port_id) { return owner_of(port_id) != nullptr; }

bool port_owner_name(uint16_t port_id, char* buf, size_t len) {
  if (len != 0) buf[0] = '\0';
  const rte_eth_dev_owner* owner = owner_of(port_id);
  if (owner == nullptr) return false;
  snprintf(buf, len, "%.*s", RTE_ETH_MAX_OWNER_NAME_LEN,
           owner->name[0] != '\0' ? owner->name : "another driver");
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
