// SPDX-License-Identifier: BSD-3-Clause
// RX queue control (doc/hardware.md §2.3-§2.5, §2.8): setup/release of the software rings, and at
// start/stop the verbs objects (CQ + WQ per queue, indirection table, RSS QP) and the posted mbufs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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

// The RSS QP's configuration (doc/hardware.md §2.5): the verbs rx_hash_fields_mask for `rss_hf`
// (0: IPv4 2-tuple, as upstream), both directions; the RX queue whose WQ is at position `pos` of
// the indirection table of `nb_rxq` queues (rss.h sets the table).
uint64_t rss_fields_mask(uint64_t rss_hf);
uint16_t rss_table_queue(const PortPriv& priv, uint16_t nb_rxq, uint16_t pos);

// The most WQEs one burst consumes or reposts.
inline constexpr uint32_t kMaxRxRefill = 64;

// rx_free_thresh as the queue uses it: 0 asks for the default; at most a quarter of the ring so
// that most of it stays posted, and at most what one refill posts (doc/guide.md "RX refill").
uint32_t rx_free_thresh_for(uint32_t requested, uint32_t ring);

// Readies a queue whose rings are bound (`rq`, `mbufs`, `desc_mask`, `buf_len`, `mp`, `port_id`,
// `priv` set): the rearm template, every RQ WQE written once (doc/hardware.md §4.4: header, zero
// OOB, SGE size and, when the pool has one lkey, the lkey), then a full ring of mbufs posted. No
// doorbell. 0, -ENOMEM (the pool is short) or -EFAULT (unregistered pool), logged.
int rx_ring_fill(RxQueue& q, const MrRegistrar& r);
// Frees the mbufs the queue owns: those posted and those waiting to be reposted.
void rx_ring_free(RxQueue& q);

// The SGE of the RQ WQE at `wqe` (a free-running index: every RX WQE is one BU).
inline constexpr uint32_t kRxSgeOffset = hw::kDmaOobSize + hw::kShortOobSize;
inline uint8_t* rx_wqe_sge(const WorkQueue& rq, uint32_t wqe) {
  return rq.ring + ((wqe * hw::kBasicUnit + kRxSgeOffset) & rq.size_mask);
}

// Posts `m` at the RQ's head: the WQE is already written, only the buffer address changes. Returns
// the SGE, for `rx_set_lkey` when the pool has several lkeys.
inline uint8_t* rx_post(RxQueue& q, rte_mbuf* m) {
  const uint32_t wqe = q.rq.head_bu++;
  q.mbufs[wqe & q.desc_mask] = m;
  uint8_t* sge = rx_wqe_sge(q.rq, wqe);
  const uint64_t addr = reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM;
  std::memcpy(sge + offsetof(hw::Sge, address), &addr, sizeof(addr));
  return sge;
}
inline void rx_set_lkey(uint8_t* sge, uint32_t lkey) {
  std::memcpy(sge + offsetof(hw::Sge, mem_key), &lkey, sizeof(lkey));
}

// A slot whose WQE failed (error completion, oversize, no replacement) keeps its buffer with this
// bit set until the refill reposts it in place; delivered mbufs leave their pointer untagged.
inline constexpr uintptr_t kRecycledTag = 1;

inline uint32_t rx_buffer_lkey(RxQueue& q, rte_mbuf* m, const MrRegistrar& r) {
  return mr_lookup(q.mr, q.priv->mr,
                   reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM, q.buf_len, q.mp,
                   r);
}

}  // namespace mana
