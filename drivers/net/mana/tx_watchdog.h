// SPDX-License-Identifier: BSD-3-Clause
// The TX stall watchdog (doc/guide.md "TX stall watchdog", doc/hardware.md §2.12): an EAL alarm of
// the primary looks at every started TX queue every quarter of `tx_stall_timeout`. A queue is
// stalled when it has descriptors outstanding, its tail (what completions freed) has not moved for
// `tx_stall_timeout` seconds, and a burst found the ring full since the last look (the application
// is still trying to send; an idle queue whose completions nobody reclaims is not a stall). Then
// every queue of the port is created again (recovery_reset_queues), the xstat tx_stall_resets
// counts it and one line is logged. The bursts pay nothing: the watchdog reads the positions and
// the ring_full counter they already keep.
#pragma once

#include <cstdint>

#include "priv.h"

struct rte_eth_dev;

namespace mana {

// dev_start (end) and dev_stop (start): arms / cancels the port's alarm. Stop waits for a check
// (and a reset) that is running. No-op with tx_stall_timeout=0 and in secondaries.
void tx_watchdog_start(rte_eth_dev* dev);
void tx_watchdog_stop(rte_eth_dev* dev);

// One look at a queue at `now` (`timeout` in timer cycles): true when it is stalled. Exposed for
// the unit tests.
bool tx_stall_seen(TxStallWatch& w, uint32_t head, uint32_t tail, uint64_t ring_full, uint64_t now,
                   uint64_t timeout);

}  // namespace mana
