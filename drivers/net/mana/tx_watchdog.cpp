// SPDX-License-Identifier: BSD-3-Clause
#include "tx_watchdog.h"

#include <cerrno>
#include <cstring>

#include <ethdev_driver.h>
#include <rte_alarm.h>
#include <rte_cycles.h>

#include "mana_log.h"
#include "priv.h"
#include "recovery.h"

namespace mana {
namespace {

uint64_t period_us(const PortPriv& priv) { return uint64_t{priv.tx_stall_timeout_s} * 250000; }

void check(void* arg);

void schedule(const PortPriv& priv) {
  if (int rc = rte_eal_alarm_set(period_us(priv), check, port_callback_arg(priv.port_id)); rc != 0)
    MANA_DRV_LOG(ERR, "port %u: cannot arm the TX stall watchdog: %s", priv.port_id, strerror(-rc));
}

// Positions a burst of some lcore writes: read whole, without ordering (a stale value only delays
// the verdict by one look).
template <typename T>
T peek(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_RELAXED);
}

void watch_all(rte_eth_dev* dev, uint64_t now) {
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    if (auto* q = txq_of(dev, i))
      q->stall_watch = TxStallWatch{peek(q->desc_tail), peek(q->stats.ring_full), now};
}

// The first started queue that is stalled, or -1.
int stalled_queue(rte_eth_dev* dev, uint64_t now, uint64_t timeout) {
  int found = -1;
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++) {
    auto* q = txq_of(dev, i);
    if (q == nullptr || dev->data->tx_queue_state[i] != RTE_ETH_QUEUE_STATE_STARTED) continue;
    if (tx_stall_seen(q->stall_watch, peek(q->desc_head), peek(q->desc_tail),
                      peek(q->stats.ring_full), now, timeout) &&
        found < 0)
      found = i;
  }
  return found;
}

// The alarm, on the EAL interrupt thread (as recovery's steps: they never run at the same time).
void check(void* arg) {
  const uint16_t port_id = port_of_callback_arg(arg);
  rte_eth_dev* dev = &rte_eth_devices[port_id];
  PortPriv& priv = *priv_of(dev);
  const uint64_t now = rte_get_timer_cycles();
  // While a removal is recovered the queues are not ours to judge; look again afresh afterwards.
  if (recovery_state(priv) != Recovery::kNone) {
    watch_all(dev, now);
    return schedule(priv);
  }
  const int q = stalled_queue(dev, now, uint64_t{priv.tx_stall_timeout_s} * rte_get_timer_hz());
  // -EBUSY: the application is starting or stopping the port, which creates the queues anyway.
  if (const int rc = q >= 0 ? recovery_reset_queues(dev) : -EBUSY; rc != -EBUSY) {
    __atomic_fetch_add(&priv.tx_stall_resets, 1, __ATOMIC_RELAXED);
    MANA_DRV_LOG(WARNING,
                 "port %u (%s): TX queue %d completed nothing for %u s with packets waiting "
                 "(tx_stall_timeout): every queue of the port was created again%s",
                 port_id, priv.ifname, q, priv.tx_stall_timeout_s,
                 rc == 0 ? "" : ", and that failed: the port stays stopped (doc/guide.md)");
    watch_all(dev, rte_get_timer_cycles());
  }
  schedule(priv);
}

}  // namespace

bool tx_stall_seen(TxStallWatch& w, uint32_t head, uint32_t tail, uint64_t ring_full, uint64_t now,
                   uint64_t timeout) {
  const bool pushing = ring_full != w.ring_full;
  w.ring_full = ring_full;
  if (tail != w.tail || head == tail) {
    w.tail = tail;
    w.tail_since = now;
    return false;
  }
  return pushing && now - w.tail_since >= timeout;
}

void tx_watchdog_start(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  if (priv.tx_stall_timeout_s == 0 || rte_eal_process_type() != RTE_PROC_PRIMARY) return;
  watch_all(dev, rte_get_timer_cycles());
  schedule(priv);
}

void tx_watchdog_stop(rte_eth_dev* dev) {
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return;
  rte_eal_alarm_cancel(check, port_callback_arg(priv_of(dev)->port_id));
}

}  // namespace mana
