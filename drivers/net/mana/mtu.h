// SPDX-License-Identifier: BSD-3-Clause
// MTU setting (doc/guide.md "MTU and jumbo frames"): the vPort's MTU is its kernel netdev's, up to
// the adapter's max MTU (doc/hardware.md §2.9).
#pragma once

#include <cstdint>

struct rte_eth_dev;

namespace mana {

// mtu_set: an MTU in [RTE_ETHER_MIN_MTU, the netdev's max MTU] that every set-up RX queue's
// buffers hold goes to the netdev; -EINVAL (or the kernel's error) with one error line otherwise.
int mtu_set(rte_eth_dev* dev, uint16_t mtu);
// dev_configure: the MTU ethdev validated (dev->data->mtu, from rxmode.mtu) goes to the netdev
// when it differs from the netdev's.
int mtu_apply(rte_eth_dev* dev);

}  // namespace mana
