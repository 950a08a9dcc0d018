// SPDX-License-Identifier: BSD-3-Clause
// RX queue interrupts (doc/hardware.md §2.7): one completion channel per RX queue, its fd in the
// ethdev interrupt vector; enable arms the CQ through its doorbell, disable consumes the event.
#pragma once

#include <cstdint>

struct rte_eth_dev;
struct ibv_context;

namespace mana {

struct RxQueue;

// Before the CQ is created: a completion channel when the application asked for RX interrupts.
int rx_intr_create_channel(rte_eth_dev* dev, RxQueue& q);
void rx_intr_destroy_channel(RxQueue& q);

// After all RX queues exist: the interrupt vector the application's epoll uses.
int rx_intr_vector_setup(rte_eth_dev* dev);
void rx_intr_vector_teardown(rte_eth_dev* dev);

int rx_queue_intr_enable(rte_eth_dev* dev, uint16_t idx);
int rx_queue_intr_disable(rte_eth_dev* dev, uint16_t idx);

}  // namespace mana
