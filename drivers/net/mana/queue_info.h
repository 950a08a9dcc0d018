// SPDX-License-Identifier: BSD-3-Clause
// rte_eth_rx/tx_queue_info_get and rte_eth_rx/tx_burst_mode_get: a queue's configuration and the
// specialised burst function the port runs (burst.h).
#pragma once

#include <cstdint>

#include <ethdev_driver.h>

namespace mana {

void rxq_info_get(rte_eth_dev* dev, uint16_t idx, rte_eth_rxq_info* info);
void txq_info_get(rte_eth_dev* dev, uint16_t idx, rte_eth_txq_info* info);
int rx_burst_mode_get(rte_eth_dev* dev, uint16_t idx, rte_eth_burst_mode* mode);
int tx_burst_mode_get(rte_eth_dev* dev, uint16_t idx, rte_eth_burst_mode* mode);

}  // namespace mana
