// SPDX-License-Identifier: BSD-3-Clause
#include "rx_mode.h"

#include <cerrno>

#include <ethdev_driver.h>

#include "mana_log.h"

namespace mana {

void rx_mode_init(rte_eth_dev* dev) { dev->data->all_multicast = 1; }

// What the vPort already does: nothing to change on the device.
int allmulticast_enable(rte_eth_dev* /*dev*/) { return 0; }

int allmulticast_disable(rte_eth_dev* dev) {
  MANA_DRV_LOG(ERR,
               "port %u: all-multicast cannot be turned off: the vPort has no multicast filter "
               "(doc/hardware.md §4.10)",
               dev->data->port_id);
  return -ENOTSUP;
}

}  // namespace mana
