// SPDX-License-Identifier: BSD-3-Clause
// Burst functions: specialised at compile time for the offloads in use and chosen at dev_start.
#pragma once

#include <cstdint>

#include <ethdev_driver.h>

namespace mana {

eth_rx_burst_t select_rx_burst(uint64_t rx_offloads);
// The TX offloads that select a checksum burst, and those that select the multi-segment one (a TSO
// WQE has at least two SGEs).
inline constexpr uint64_t kTxCsumOffloads =
    RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
inline constexpr uint64_t kTxMultiSegOffloads =
    RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_TCP_TSO;

// `long_oob`: some TX queue's OOB template is long (vPort offset above 255); a burst chosen without
// it sends short OOBs only.
eth_tx_burst_t select_tx_burst(uint64_t tx_offloads, bool long_oob = false);
// The TX burst for a started port: its offloads and its queues' OOB templates.
eth_tx_burst_t select_port_tx_burst(const rte_eth_dev* dev);

// rte_eth_tx_prepare: validates offload requests and writes the L4 pseudo-header seeds. Returns the
// number of good packets; rte_errno is EINVAL or ENOTSUP for the first bad one.
uint16_t tx_prepare(void* queue, rte_mbuf** pkts, uint16_t n);

// Installed while the port is stopped: receive and send nothing.
uint16_t rx_burst_stopped(void* queue, rte_mbuf** pkts, uint16_t n);
uint16_t tx_burst_stopped(void* queue, rte_mbuf** pkts, uint16_t n);

// Frees the mbufs of completed TX descriptors (also used by tx_done_cleanup). Returns how many
// packets completed.
uint32_t tx_reclaim(struct TxQueue& q);

}  // namespace mana
