// SPDX-License-Identifier: BSD-3-Clause
// The MTU is the application's: the vPort keeps the MTU Azure gave it (1500), and RX buffers are
// sized for that (rx_queue_setup), so any standard MTU needs nothing from the device. Jumbo frames
// would need the kernel netdev's MTU changed (DPDK-main does, doc/hardware.md §2.9).
#include "mtu.h"

#include <cerrno>

#include <ethdev_driver.h>

#include "mana_log.h"
#include "priv.h"

namespace mana {

int mtu_set(rte_eth_dev* dev, uint16_t mtu) {
  if (mtu < RTE_ETHER_MIN_MTU || mtu > kMaxMtu) {
    MANA_DRV_LOG(ERR, "port %u: MTU %u is not supported: the MTU must be %u..%u (no jumbo frames)",
                 dev->data->port_id, mtu, RTE_ETHER_MIN_MTU, kMaxMtu);
    return -EINVAL;
  }
  return 0;
}

}  // namespace mana
