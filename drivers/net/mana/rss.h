// SPDX-License-Identifier: BSD-3-Clause
// RSS configuration (doc/hardware.md §2.5): key, hash types and the fixed 64-entry indirection
// table.
#pragma once

#include <cstdint>

#include <rte_ethdev.h>

namespace mana {

inline constexpr uint64_t kSupportedRssHf =
    RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP |
    RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_TCP | RTE_ETH_RSS_NONFRAG_IPV6_UDP;

// A new table, key or hash types while the port is started re-create the RSS QP (queue_control.h).
int rss_hash_update(rte_eth_dev* dev, rte_eth_rss_conf* conf);
int rss_hash_conf_get(rte_eth_dev* dev, rte_eth_rss_conf* conf);
int reta_query(rte_eth_dev* dev, rte_eth_rss_reta_entry64* conf, uint16_t size);
// The NIC's 64 entries repeat the table's WQs with period `nb_rxq` (doc/hardware.md §2.5) and each
// WQ may be listed once: setting entry i sets every entry congruent to i modulo the number of RX
// queues, and the result must give every queue one position; -ENOTSUP otherwise (doc/guide.md
// "RSS at run time").
int reta_update(rte_eth_dev* dev, rte_eth_rss_reta_entry64* conf, uint16_t size);

}  // namespace mana
