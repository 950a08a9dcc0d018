// SPDX-License-Identifier: BSD-3-Clause
#include "rx_mode.h"

#include <cerrno>

#include <ethdev_driver.h>

#include "mana_log.h"
#include "port_owner.h"

namespace mana {

void rx_mode_init(rte_eth_dev* dev) { dev->data->all_multicast = 1; }

// What the vPort already does: nothing to change on the device.
int allmulticast_enable(rte_eth_dev* /*dev*/) { return 0; }

// An owner (DPDK's netvsc PMD) passes its own port's setting on at every start, as ethdev replays
// it, and takes the answer itself: no error line for a request the application never made.
int allmulticast_disable(rte_eth_dev* dev) {
  if (owned_by_another_driver(dev->data->port_id))
    MANA_DRV_LOG(DEBUG, "port %u: all-multicast stays on (its owner asked to turn it off)",
                 dev->data->port_id);
  else
    MANA_DRV_LOG(ERR,
                 "port %u: all-multicast cannot be turned off: the vPort has no multicast filter "
                 "(doc/hardware.md §4.10)",
                 dev->data->port_id);
  return -ENOTSUP;
}

}  // namespace mana
