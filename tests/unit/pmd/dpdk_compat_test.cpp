// SPDX-License-Identifier: BSD-3-Clause
// drivers/net/mana/dpdk_compat.h under the DPDK this build is for (22.11, 24.11 or 25.11;
// doc/guide.md "Other DPDK versions"): the ops it builds hand ethdev what that DPDK's ethdev reads.
#include <algorithm>

#include <gtest/gtest.h>
#include <rte_ethdev.h>

#include "dpdk_compat.h"
#include "rx_cqe.h"

namespace {

using namespace mana;

// The driver's list, as ethdev reads it through the op: 6 packet types, without the end mark
// (24.11, 25.11), or with it (22.11).
TEST(DpdkCompat, SupportedPtypesAsEthdevReadsThem) {
  const eth_dev_supported_ptypes_get_t op = compat::supported_ptypes_op<rx_supported_ptypes>();
  rte_eth_dev dev{};
#if RTE_VERSION >= RTE_VERSION_NUM(24, 3, 0, 0)
  size_t n = 99;
  const uint32_t* list = op(&dev, &n);
  ASSERT_EQ(n, 6u);
#else
  const uint32_t* list = op(&dev);
  size_t n = 0;
  while (list[n] != RTE_PTYPE_UNKNOWN) n++;
  ASSERT_EQ(n, 6u);
#endif
  ASSERT_EQ(list, rx_supported_ptypes());
  EXPECT_NE(std::find(list, list + n, RTE_PTYPE_L4_UDP), list + n);
  EXPECT_EQ(std::find(list, list + n, RTE_PTYPE_UNKNOWN), list + n);
}

rte_eth_stats* seen_stats;
compat::QueueStats* seen_qstats;
int record(rte_eth_dev* /*dev*/, rte_eth_stats* stats, compat::QueueStats* qstats) {
  seen_stats = stats;
  seen_qstats = qstats;
  return 7;
}

// The per-queue counters go where that DPDK's ethdev reads them: the separate eth_queue_stats it
// passes (25.11, NULL when it wants none), or rte_eth_stats itself (22.11, 24.11).
TEST(DpdkCompat, QueueCountersGoWhereEthdevReadsThem) {
  const eth_stats_get_t op = compat::stats_get_op<record>();
  rte_eth_dev dev{};
  rte_eth_stats stats{};
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
  eth_queue_stats qstats{};
  EXPECT_EQ(op(&dev, &stats, &qstats), 7);
  EXPECT_EQ(seen_stats, &stats);
  EXPECT_EQ(seen_qstats, &qstats);
  EXPECT_EQ(op(&dev, &stats, nullptr), 7);
  EXPECT_EQ(seen_qstats, nullptr);
#else
  EXPECT_EQ(op(&dev, &stats), 7);
  EXPECT_EQ(seen_stats, &stats);
  EXPECT_EQ(seen_qstats, &stats);
#endif
}

}  // namespace
