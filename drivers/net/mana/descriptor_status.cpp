// SPDX-License-Identifier: BSD-3-Clause
#include "descriptor_status.h"

#include <cerrno>

#include "dpdk_compat.h"
#include "gdma.h"
#include "rx_cqe.h"

namespace mana {
namespace {

// A queue of a stopped port (or a stopped queue) has no rings to look at.
bool ready(const QueueGate& g) { return gate_is_open(g); }

// No queue: DPDK 22.11 checks the queue id only in debug builds and passes the empty slot of a
// queue that was never set up (doc/guide.md "Queues at run time"); the answers are those its debug
// checks give. rx_queue_count's type is unsigned before DPDK 25.11 (dpdk_compat.h),
// rte_eth_rx_queue_count returns it as an int.
compat::RxQueueCount rx_queue_count(void* queue) {
  if (queue == nullptr) return static_cast<compat::RxQueueCount>(-EINVAL);
  const auto& q = *static_cast<const RxQueue*>(queue);
  if (!ready(q.gate)) return 0;
  return rx_completed_wqes(q, q.desc_mask + 1);
}

int rx_descriptor_status(void* queue, uint16_t offset) {
  if (queue == nullptr) return -ENODEV;
  const auto& q = *static_cast<const RxQueue*>(queue);
  if (!ready(q.gate)) return offset <= q.desc_mask ? RTE_ETH_RX_DESC_UNAVAIL : -EINVAL;
  return rx_desc_status(q, offset);
}

int tx_descriptor_status(void* queue, uint16_t offset) {
  if (queue == nullptr) return -ENODEV;
  const auto& q = *static_cast<const TxQueue*>(queue);
  if (!ready(q.gate)) return offset <= q.desc_mask ? RTE_ETH_TX_DESC_UNAVAIL : -EINVAL;
  return tx_desc_status(q, offset);
}

}  // namespace

uint32_t rx_completed_wqes(const RxQueue& q, uint32_t limit) {
  const uint32_t posted = q.rq.head_bu - q.rq.tail_bu;
  limit = RTE_MIN(limit, posted);
  uint32_t n = 0;
  if (q.partial_cqe != nullptr) n = rx_cqe_wqes(*q.partial_cqe) - q.partial_next;
  CompletionQueue cq = q.cq;  // a copy: the walk moves its head only
  const hw::Cqe* e = nullptr;
  for (uint32_t seen = 0; n < limit && seen <= cq.mask && cq_peek(cq, &e) == CqPoll::kValid;
       seen++, cq.head++)
    n += rx_cqe_wqes(*e);
  return RTE_MIN(n, limit);
}

int rx_desc_status(const RxQueue& q, uint32_t offset) {
  if (offset > q.desc_mask) return -EINVAL;
  if (offset >= q.rq.head_bu - q.rq.tail_bu) return RTE_ETH_RX_DESC_UNAVAIL;
  return rx_completed_wqes(q, offset + 1) > offset ? RTE_ETH_RX_DESC_DONE : RTE_ETH_RX_DESC_AVAIL;
}

int tx_desc_status(const TxQueue& q, uint32_t offset) {
  if (offset > q.desc_mask) return -EINVAL;
  const uint32_t free_descs = q.desc_mask + 1 - (q.desc_head - q.desc_tail);
  return offset < free_descs ? RTE_ETH_TX_DESC_DONE : RTE_ETH_TX_DESC_FULL;
}

void install_descriptor_ops(rte_eth_dev* dev) {
  dev->rx_queue_count = rx_queue_count;
  dev->rx_descriptor_status = rx_descriptor_status;
  dev->tx_descriptor_status = tx_descriptor_status;
}

}  // namespace mana
