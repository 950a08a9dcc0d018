// RX queue control (doc/hardware.md §2.3-§2.5, §2.8): setup/release of the software rings, and at
// start/stop the verbs objects (CQ + WQ per queue, indirection table, RSS QP) and the posted mbufs.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>

#include "gdma.h"
#include "mr_cache.h"
#include "priv.h"

struct rte_eth_dev;
struct rte_eth_rxconf;
struct rte_mempool;

namespace mana {

int rx_queue_setup(rte_eth_dev* dev, uint16_t idx, uint16_t nb_desc, unsigned socket,
                   const rte_eth_rxconf* conf, rte_mempool* mp);
void rx_queue_release(rte_eth_dev* dev, uint16_t idx);

// Creates the hardware queues of every RX queue behind one RSS QP and posts a full ring of mbufs
// on each. On failure everything created is destroyed again. 0 or negative errno (logged).
int rx_queues_start(rte_eth_dev* dev);
// Destroys the RSS QP, table, WQs and CQs and frees every posted mbuf.
void rx_queues_stop(rte_eth_dev* dev);

// The RQ WQE of one receive buffer (doc/hardware.md §4.4): 8 zero bytes of OOB, one SGE over the
// data room.
inline void post_rx_buffer(RxQueue& q, rte_mbuf* m, uint32_t lkey) {
  static constexpr uint64_t kZeroOob = 0;
  const hw::Sge sge{reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM, lkey,
                    q.buf_len};
  q.mbufs[q.rq.head_bu & q.desc_mask] = m;
  post_wqe(q.rq, &kZeroOob, hw::kShortOobSize, &sge, 1);
}

inline uint32_t rx_buffer_lkey(RxQueue& q, rte_mbuf* m, const MrRegistrar& r) {
  return mr_lookup(q.mr, q.priv->mr,
                   reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM, q.buf_len, q.mp,
                   r);
}

}  // namespace mana
