// SPDX-License-Identifier: BSD-3-Clause
// rte_eth_rx_queue_count, rte_eth_rx_descriptor_status and rte_eth_tx_descriptor_status
// (doc/guide.md "Queues at run time"). Read-only: the owner bits of the CQ (doc/hardware.md §4.5)
// and the ring indices; nothing is consumed or written, so the polling lcore may call them between
// bursts. Like the bursts, they are for the queue's polling lcore.
#pragma once

#include <cstdint>

#include <ethdev_driver.h>

#include "priv.h"

namespace mana {

// RQ WQEs from the tail that the NIC has completed (received frames, or failed ones), counted up
// to `limit`: the packets of the CQEs from the head, and the rest of a CQE a burst carried over.
uint32_t rx_completed_wqes(const RxQueue& q, uint32_t limit);
// RTE_ETH_RX_DESC_DONE (completed, not yet polled), _AVAIL (posted, empty) or _UNAVAIL (not
// posted: consumed and not refilled yet) for the `offset`-th WQE from the tail; -EINVAL beyond
// the ring.
int rx_desc_status(const RxQueue& q, uint32_t offset);
// RTE_ETH_TX_DESC_DONE (free for a packet: never used, or completed and reclaimed) or _FULL (a
// packet the NIC has not completed, or whose completion the driver has not reclaimed yet) for the
// `offset`-th descriptor from where the next packet goes; -EINVAL beyond the ring.
int tx_desc_status(const TxQueue& q, uint32_t offset);

// Sets the three functions on `dev` (the ethdev copies them into its fast-path table).
void install_descriptor_ops(rte_eth_dev* dev);

}  // namespace mana
