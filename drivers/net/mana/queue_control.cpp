// SPDX-License-Identifier: BSD-3-Clause
#include "queue_control.h"

#include <cerrno>

#include "burst.h"
#include "mana_log.h"
#include "priv.h"
#include "recovery.h"
#include "rx_queue.h"

namespace mana {
namespace {

void close_gate(rte_eth_dev* dev, QueueGate& g) {
  if (!gate_close(g, kGateTimeoutMs))
    MANA_DRV_LOG(ERR, "port %u: a burst stayed inside a queue for %u ms: going on anyway",
                 dev->data->port_id, kGateTimeoutMs);
}

// Queue operations change hardware objects only with the VF there; recovery waits meanwhile.
class ControlSection {
 public:
  explicit ControlSection(rte_eth_dev* dev) : dev_(dev) { recovery_control_begin(dev); }
  ~ControlSection() { recovery_control_end(dev_); }
  bool vf_here() const { return recovery_state(*priv_of(dev_)) == Recovery::kNone; }

 private:
  rte_eth_dev* dev_;
};

// Whether a stopped RX queue's CQ holds completions (frames the NIC delivered while it was
// stopped): those are stale once it starts again.
bool rx_has_completions(const RxQueue& q) {
  const hw::Cqe* e = nullptr;
  return q.partial_cqe != nullptr || cq_peek(q.cq, &e) != CqPoll::kEmpty;
}

// A queue start while the VF is removed (doc/guide.md "VF removal and recovery"): during the
// recovery the queue's state says started and its gate opens when the recovery brings the queues
// back (resume opens the gates of the started queues); after a failed recovery it is refused.
// 1 when the VF is here and the caller starts the queue, else what the start returns.
int start_while_removed(rte_eth_dev* dev, const char* kind, uint16_t idx, uint8_t& state) {
  const Recovery r = recovery_state(*priv_of(dev));
  if (r == Recovery::kNone) return 1;
  const uint16_t port = dev->data->port_id;
  if (r == Recovery::kFailed) {
    MANA_DRV_LOG(ERR,
                 "port %u: cannot start %s queue %u: the VF was removed and did not come back: "
                 "reset the port (rte_eth_dev_reset) once the VF is back, or close it",
                 port, kind, idx);
    return -EIO;
  }
  state = RTE_ETH_QUEUE_STATE_STARTED;
  MANA_DRV_LOG(NOTICE,
               "port %u: %s queue %u starts when the VF is back (the port is recovering from its "
               "removal: RTE_ETH_EVENT_RECOVERY_SUCCESS)",
               port, kind, idx);
  return 0;
}

}  // namespace

void set_start_queue_states(rte_eth_dev* dev) {
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    dev->data->rx_queue_state[i] =
        rxq_of(dev, i)->deferred_start ? RTE_ETH_QUEUE_STATE_STOPPED : RTE_ETH_QUEUE_STATE_STARTED;
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    dev->data->tx_queue_state[i] =
        txq_of(dev, i)->deferred_start ? RTE_ETH_QUEUE_STATE_STOPPED : RTE_ETH_QUEUE_STATE_STARTED;
}

int rx_rebuild(rte_eth_dev* dev, const char* why) {
  PortPriv& priv = *priv_of(dev);
  if (dev->data->dev_conf.intr_conf.rxq != 0) {
    MANA_DRV_LOG(ERR,
                 "port %u: cannot %s while started with RX interrupts: the RX queues' event fds "
                 "would change under the application; stop the port first",
                 priv.port_id, why);
    return -ENOTSUP;
  }
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++) close_gate(dev, rxq_of(dev, i)->gate);
  rx_queues_stop(dev);
  const int rc = rx_queues_start(dev);
  if (rc != 0) {
    MANA_DRV_LOG(ERR,
                 "port %u: cannot %s: RX queues could not be created again; every RX queue "
                 "is stopped (stop and start the port)",
                 priv.port_id, why);
    for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
      dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
    return rc;
  }
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    if (dev->data->rx_queue_state[i] == RTE_ETH_QUEUE_STATE_STARTED)
      gate_open(rxq_of(dev, i)->gate);
  return 0;
}

// The RQ of a stopped queue stays posted: the NIC fills it, then drops what the table still
// steers there (no WQE, counted in imissed). Its frames are dropped at start (rx_rebuild).
int rx_queue_stop_op(rte_eth_dev* dev, uint16_t idx) {
  ControlSection cs(dev);
  close_gate(dev, rxq_of(dev, idx)->gate);
  dev->data->rx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STOPPED;
  return 0;
}

int rx_queue_start_op(rte_eth_dev* dev, uint16_t idx) {
  ControlSection cs(dev);
  if (const int rc = start_while_removed(dev, "RX", idx, dev->data->rx_queue_state[idx]); rc != 1)
    return rc;
  RxQueue& q = *rxq_of(dev, idx);
  dev->data->rx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STARTED;
  // Nothing arrived while it was stopped (or RX interrupts forbid a rebuild): it goes on as is.
  if (!rx_has_completions(q) || dev->data->dev_conf.intr_conf.rxq != 0) {
    gate_open(q.gate);
    return 0;
  }
  const int rc = rx_rebuild(dev, "drop the frames a stopped RX queue received");
  if (rc != 0) dev->data->rx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STOPPED;
  return rc;
}

// Packets already posted are sent by the NIC; their mbufs are freed when they complete (here if
// they have, else at start or at port stop).
int tx_queue_stop_op(rte_eth_dev* dev, uint16_t idx) {
  ControlSection cs(dev);
  TxQueue& q = *txq_of(dev, idx);
  close_gate(dev, q.gate);
  if (cs.vf_here() && q.cq.ring != nullptr) tx_reclaim(q);
  dev->data->tx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STOPPED;
  return 0;
}

int tx_queue_start_op(rte_eth_dev* dev, uint16_t idx) {
  ControlSection cs(dev);
  if (const int rc = start_while_removed(dev, "TX", idx, dev->data->tx_queue_state[idx]); rc != 1)
    return rc;
  TxQueue& q = *txq_of(dev, idx);
  if (q.cq.ring != nullptr) tx_reclaim(q);
  dev->data->tx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STARTED;
  gate_open(q.gate);
  return 0;
}

}  // namespace mana
