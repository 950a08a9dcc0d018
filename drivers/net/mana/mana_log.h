// SPDX-License-Identifier: BSD-3-Clause
// Logging for the PMD under the logtypes Azure users already pass to --log-level:
// pmd.net.mana.init (probe, configure, start) and pmd.net.mana.driver (queues, data-path events).
#pragma once

#include <rte_log.h>

extern int mana_logtype_init;
extern int mana_logtype_driver;

#define MANA_INIT_LOG(level, fmt, ...) \
  rte_log(RTE_LOG_##level, mana_logtype_init, "net_mana: " fmt "\n" __VA_OPT__(, ) __VA_ARGS__)
#define MANA_DRV_LOG(level, fmt, ...) \
  rte_log(RTE_LOG_##level, mana_logtype_driver, "net_mana: " fmt "\n" __VA_OPT__(, ) __VA_ARGS__)

// Data-path logs exist only in debug builds of the burst functions.
#if defined(RTE_ETHDEV_DEBUG_RX) || defined(RTE_ETHDEV_DEBUG_TX)
#define MANA_DP_LOG(level, fmt, ...) MANA_DRV_LOG(level, fmt __VA_OPT__(, ) __VA_ARGS__)
#else
#define MANA_DP_LOG(level, fmt, ...) \
  do {                               \
  } while (0)
#endif
