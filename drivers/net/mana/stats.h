// SPDX-License-Identifier: BSD-3-Clause
// Basic statistics (with per-queue counters) and extended statistics of a port.
#pragma once

#include <rte_ethdev.h>

#include "dpdk_compat.h"

namespace mana {

// The per-queue counters go to `qstats` (NULL: none wanted; before DPDK 25.11 it is `stats`
// itself, dpdk_compat.h).
int stats_get(rte_eth_dev* dev, rte_eth_stats* stats, compat::QueueStats* qstats);
int stats_reset(rte_eth_dev* dev);
int xstats_get(rte_eth_dev* dev, rte_eth_xstat* xstats, unsigned n);
int xstats_get_names(rte_eth_dev* dev, rte_eth_xstat_name* names, unsigned size);
int xstats_reset(rte_eth_dev* dev);

}  // namespace mana
