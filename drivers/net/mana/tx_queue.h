// SPDX-License-Identifier: BSD-3-Clause
// TX queue control (doc/hardware.md §2.3, §2.4, §2.8): setup/release of the descriptor ring, and at
// start/stop the raw QP and its CQ, and the mbufs still in flight.
#pragma once

#include <cstdint>

struct rte_eth_dev;
struct rte_eth_txconf;

namespace mana {

// Defaults of tx_rs_thresh and tx_free_thresh (dev_infos_get, doc/guide.md "TX thresholds"): a CQE
// requested by the last packet of every burst, and completions reclaimed at every burst.
inline constexpr uint16_t kDefaultTxRsThresh = 1;
inline constexpr uint16_t kDefaultTxFreeThresh = 0;

int tx_queue_setup(rte_eth_dev* dev, uint16_t idx, uint16_t nb_desc, unsigned socket,
                   const rte_eth_txconf* conf);
void tx_queue_release(rte_eth_dev* dev, uint16_t idx);

// Creates CQ + raw QP of every TX queue. On failure everything created is destroyed again.
int tx_queues_start(rte_eth_dev* dev);
// Destroys QPs and CQs and frees the mbufs not yet completed.
void tx_queues_stop(rte_eth_dev* dev);

}  // namespace mana
