// SPDX-License-Identifier: BSD-3-Clause
// Where DPDK's driver interface differs between the versions the driver builds against (22.11,
// 24.11, 25.11; doc/guide.md "Other DPDK versions"): each difference once, named by the DPDK
// release and change that made it, so that the rest of the driver, the data path included, is one
// code for all of them. meson.build refuses other versions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <unistd.h>

#include <ethdev_driver.h>
#include <rte_mbuf_ptype.h>
#include <rte_version.h>

namespace mana::compat {

// DPDK 24.03 gave eth_dev_ops::dev_supported_ptypes_get an out-parameter for the list's length
// (`size_t *no_of_elements`, which ethdev reads instead of looking for the RTE_PTYPE_UNKNOWN end
// mark 22.11 needed). `List` returns the RTE_PTYPE_UNKNOWN-terminated list for both.
template <const uint32_t* (*List)()>
constexpr eth_dev_supported_ptypes_get_t supported_ptypes_op() {
#if RTE_VERSION >= RTE_VERSION_NUM(24, 3, 0, 0)
  return [](rte_eth_dev* /*dev*/, size_t* count) {
    const uint32_t* list = List();
    size_t n = 0;
    while (list[n] != RTE_PTYPE_UNKNOWN) n++;
    *count = n;
    return list;
  };
#else
  return [](rte_eth_dev* /*dev*/) { return List(); };
#endif
}

// DPDK 25.11 ("ethdev: remove queue stats from basic stats structure") moved the per-queue counters
// (q_ipackets, q_opackets, q_ibytes, q_obytes, q_errors) out of rte_eth_stats into eth_queue_stats,
// a third argument of eth_dev_ops::stats_get (NULL when the caller wants none). Before, the same
// fields are in rte_eth_stats itself.
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
using QueueStats = eth_queue_stats;
#else
using QueueStats = rte_eth_stats;
#endif
using StatsFill = int (*)(rte_eth_dev*, rte_eth_stats*, QueueStats*);

template <StatsFill Fill>
constexpr eth_stats_get_t stats_get_op() {
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
  return [](rte_eth_dev* dev, rte_eth_stats* stats, eth_queue_stats* qstats) {
    return Fill(dev, stats, qstats);
  };
#else
  return [](rte_eth_dev* dev, rte_eth_stats* stats) { return Fill(dev, stats, stats); };
#endif
}

// eth_rx_queue_count_t returns uint32_t in 22.11 and 24.11, int in 25.11 (as eth_tx_queue_count_t
// always did: the count or a negative errno, which rte_eth_rx_queue_count always returned as int).
using RxQueueCount = std::invoke_result_t<eth_rx_queue_count_t, void*>;

// The system's page size (what the doorbell page is mapped with and what memory registrations are
// aligned to). EAL's rte_mem_page_size() is declared in rte_eal_paging.h, which DPDK does not
// install, not even with its driver SDK: only builds with headers from a source tree had it.
inline size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace mana::compat

// RTE_PMD_EXPORT_NAME took an index (__COUNTER__) for its static name array up to 24.11; 25.11
// moved it to dev_driver.h, where it exports the driver's name symbol and takes the name alone
// (RTE_PMD_EXPORT_SYMBOL came with it).
#ifdef RTE_PMD_EXPORT_SYMBOL
#define MANA_PMD_EXPORT_NAME(name) RTE_PMD_EXPORT_NAME(name)
#else
#define MANA_PMD_EXPORT_NAME(name) RTE_PMD_EXPORT_NAME(name, __COUNTER__)
#endif
