// SPDX-License-Identifier: BSD-3-Clause
// MTU setting (doc/guide.md "MTU and jumbo frames"): the vPort's MTU is its kernel netdev's, up to
// the adapter's max MTU (doc/hardware.md §2.9).
#pragma once

#include <cstdint>

struct rte_eth_dev;

namespace mana {

// mtu_set: an MTU in [RTE_ETHER_MIN_MTU, the netdev's max MTU] that every set-up RX queue's
// buffers hold goes to the netdev; -EINVAL (or the kernel's error) with one error line otherwise.
// A port that another driver owns (DPDK's netvsc PMD) takes an MTU its buffers do not hold: its
// owner applies its own MTU when it adds the VF again after a servicing, and a refusal there
// would cost it the VF (doc/guide.md "Under DPDK's netvsc PMD"); frames longer than the buffers
// are then dropped and counted.
int mtu_set(rte_eth_dev* dev, uint16_t mtu);
// The first set-up RX queue whose buffers cannot hold the largest frame of `mtu`, or -1.
int rx_queue_short_of(const rte_eth_dev* dev, uint16_t mtu);
// dev_start of a port another driver owns: one warning line when its RX buffers are shorter than
// its MTU's frames (taken for the owner by mtu_set and rx_queue_setup).
void mtu_warn_short_buffers(const rte_eth_dev* dev);
// dev_configure: the MTU ethdev validated (dev->data->mtu, from rxmode.mtu) goes to the netdev
// when it differs from the netdev's.
int mtu_apply(rte_eth_dev* dev);

}  // namespace mana
