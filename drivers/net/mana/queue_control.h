// SPDX-License-Identifier: BSD-3-Clause
// Queues at run time (doc/guide.md "Queues at run time"): start and stop of one queue of a started
// port, deferred start, and the re-creation of the RX side that a new RSS table, key or hash types
// need while the port runs. The NIC cannot stop one WQ (libmana has no modify_wq, doc/hardware.md
// §2.10): a stopped queue is a closed gate (queue_gate.h) over hardware queues that stay.
#pragma once

#include <cstdint>

#include <ethdev_driver.h>

namespace mana {

int rx_queue_start_op(rte_eth_dev* dev, uint16_t idx);
int rx_queue_stop_op(rte_eth_dev* dev, uint16_t idx);
int tx_queue_start_op(rte_eth_dev* dev, uint16_t idx);
int tx_queue_stop_op(rte_eth_dev* dev, uint16_t idx);

// Destroys and creates again the RSS QP, the indirection table and every RX queue's CQ and WQ of a
// started port, with fresh mbufs (frames not yet polled are dropped, their mbufs go back to the
// pool); TX queues keep running. The gates of the RX queues in state started open again. 0,
// -ENOTSUP with RX interrupts (their fds would change under the application), or the negative
// errno of a failed creation (logged; every RX queue is then stopped).
int rx_rebuild(rte_eth_dev* dev, const char* why);

// The queue states of a port being started: deferred queues stay stopped (gates closed).
void set_start_queue_states(rte_eth_dev* dev);

}  // namespace mana
