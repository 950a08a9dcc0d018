// SPDX-License-Identifier: BSD-3-Clause
// The vPort's hardware drop counter as the kernel shows it on the VF's netdev (doc/hardware.md
// §2.11): <ibdev_path>/device/net/<if>/statistics/rx_missed_errors, which the MANA kernel driver
// fills from the function's hc_rx_discards_no_wqe. Read on the control path only (stats_get,
// xstats_get), from any process: the path and the reset base live in the shared PortPriv.
#pragma once

#include <cstdint>

namespace mana {

struct PortPriv;

// Where the port's counter is, for the RDMA device at `ibdev_path` (after probe and re-add).
void hw_counters_attach(PortPriv& priv, const char* ibdev_path);
// Frames the NIC dropped for want of a posted RX WQE since the last reset, as far as the kernel
// shows them: 0 (said once in the log) when it does not show the counter, and 0 while the netdev
// is down, which a DPDK port needs (said once too): on Azure imissed stays 0.
uint64_t hw_rx_missed(PortPriv& priv);
// stats_reset: the next hw_rx_missed counts from 0.
void hw_counters_reset(PortPriv& priv);

}  // namespace mana
