// SPDX-License-Identifier: BSD-3-Clause
#include "tx_queue.h"

#include <cerrno>
#include <cstring>

#include <ethdev_driver.h>
#include <infiniband/manadv.h>
#include <infiniband/verbs.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include "kept_queues.h"
#include "mana_log.h"
#include "priv.h"
#include "queue_create.h"

namespace mana {
namespace {

void free_pending_mbufs(TxQueue& q) {
  for (; q.desc_tail != q.desc_head; q.desc_tail++) {
    const uint32_t at = q.desc_tail & q.desc_mask;
    rte_pktmbuf_free(q.mbufs[at]);
    q.mbufs[at] = nullptr;
    q.descs[at] = TxDesc{};
  }
}

// tx_rs_thresh and tx_free_thresh (doc/guide.md "TX thresholds"): 0 asks for the defaults, a CQE
// and a reclaim at every burst. A CQE at least every `n - 1` packets keeps one outstanding
// whenever the descriptor ring is full, so a burst that finds it full can always reclaim; an SQ
// that fills first gets its CQE from the burst (tx_burst.cpp request_cqe_if_due).
int set_thresholds(TxQueue& q, const PortPriv& priv, uint16_t idx, uint32_t n,
                   const rte_eth_txconf& conf) {
  const uint32_t rs = conf.tx_rs_thresh != 0 ? conf.tx_rs_thresh : kDefaultTxRsThresh;
  if (rs >= n || conf.tx_free_thresh > n) {
    MANA_DRV_LOG(ERR,
                 "port %u TX queue %u: tx_rs_thresh %u must be below and tx_free_thresh %u at "
                 "most the ring size %u",
                 priv.port_id, idx, conf.tx_rs_thresh, conf.tx_free_thresh, n);
    return -EINVAL;
  }
  q.rs_thresh = static_cast<uint16_t>(rs);
  q.free_thresh = conf.tx_free_thresh;
  q.reclaim_below = conf.tx_free_thresh != 0 ? conf.tx_free_thresh : n + 1;
  return 0;
}

// The mbuf flag tx_prepare leaves on a packet it seeded, so that the burst need not check the
// seed again (tx_prepare.cpp). 0 if DPDK has no flag left: the burst then always checks.
uint64_t seeded_flag() {
  rte_mbuf_dynflag desc{};
  snprintf(desc.name, sizeof(desc.name), "mana_tx_seeded");
  const int bit = rte_mbuf_dynflag_register(&desc);
  return bit < 0 ? 0 : uint64_t{1} << bit;
}

int create_queue(PortPriv& priv, TxQueue& q) {
  char what[48];
  if (int rc = use_dpdk_memory_for_queues(priv.ctx, q.socket); rc != 0) return rc;
  snprintf(what, sizeof(what), "TX queue %u CQ", q.queue_id);
  q.ib_cq = ibv_create_cq(priv.ctx, static_cast<int>(q.nb_desc), nullptr, nullptr, 0);
  if (q.ib_cq == nullptr) return log_queue_create_error(priv, what, errno);

  ibv_qp_init_attr attr{};
  attr.send_cq = q.ib_cq;
  attr.recv_cq = q.ib_cq;
  attr.cap.max_send_wr = q.nb_desc;
  attr.cap.max_send_sge = q.max_sge;
  attr.qp_type = IBV_QPT_RAW_PACKET;
  attr.sq_sig_all = 0;
  snprintf(what, sizeof(what), "TX queue %u QP", q.queue_id);
  q.ib_qp = ibv_create_qp(priv.parent_pd, &attr);
  if (q.ib_qp == nullptr) return log_queue_create_error(priv, what, errno);

  // The CQ's id exists only now that its raw QP does (rdma-core >= 62 reports UINT32_MAX before).
  manadv_qp qp{};
  manadv_cq cq{};
  manadv_obj obj{};
  obj.qp.in = q.ib_qp;
  obj.qp.out = &qp;
  obj.cq.in = q.ib_cq;
  obj.cq.out = &cq;
  if (int rc = manadv_init_obj(&obj, MANADV_OBJ_QP | MANADV_OBJ_CQ); rc != 0) {
    MANA_DRV_LOG(ERR, "port %u TX queue %u: manadv_init_obj failed: %s", priv.port_id, q.queue_id,
                 strerror(rc));
    return -rc;
  }
  // A basic unit per descriptor at least: single-segment short-OOB WQEs then never fill the SQ
  // before the descriptor ring (tx_burst.cpp request_cqe_if_due relies on it).
  if (!is_pow2(cq.count) || !is_pow2(qp.sq_size) || qp.sq_size < hw::kMaxSqeSize ||
      qp.sq_size / hw::kBasicUnit < q.nb_desc) {
    MANA_DRV_LOG(ERR, "port %u TX queue %u: unexpected queue geometry (CQ %u, SQ %u B)",
                 priv.port_id, q.queue_id, cq.count, qp.sq_size);
    return -EPROTO;
  }
  if (!cq_id_assigned(priv, "TX", q.queue_id, cq.cq_id)) return -EPROTO;
  q.cq = make_completion_queue(static_cast<hw::Cqe*>(cq.buf), cq.count, cq.cq_id);
  q.sq = WorkQueue{static_cast<uint8_t*>(qp.sq_buf),
                   qp.sq_size - 1,
                   qp.sq_size / hw::kBasicUnit,
                   0,
                   0,
                   qp.sq_id};
  if (qp.tx_vp_offset > kMaxVportOffset) {
    MANA_DRV_LOG(ERR, "port %u TX queue %u: vPort offset %u does not fit the TX OOB (at most %u)",
                 priv.port_id, q.queue_id, qp.tx_vp_offset, kMaxVportOffset);
    return -EPROTO;
  }
  set_tx_oob(q, cq.cq_id, qp.sq_id, qp.tx_vp_offset);
  q.desc_head = q.desc_tail = 0;
  q.since_cqe = 0;
  q.wqe_offset_unit = kWqeOffsetUnknown;
  priv.db_page = qp.db_page;
  return 0;
}

void destroy_queue(TxQueue& q) {
  if (q.ib_qp != nullptr) ibv_destroy_qp(q.ib_qp);
  if (q.ib_cq != nullptr) ibv_destroy_cq(q.ib_cq);
  q.ib_qp = nullptr;
  q.ib_cq = nullptr;
  free_pending_mbufs(q);
  q.desc_head = q.desc_tail = 0;
  q.sq = WorkQueue{};
  q.cq = CompletionQueue{};
  mr_queue_cache_reset(q.mr);
}

}  // namespace

int tx_queue_setup(rte_eth_dev* dev, uint16_t idx, uint16_t nb_desc, unsigned socket,
                   const rte_eth_txconf* conf) {
  PortPriv* priv = priv_of(dev);
  const int sock =
      socket == static_cast<unsigned>(SOCKET_ID_ANY) ? priv->socket : static_cast<int>(socket);
  const uint32_t n = ring_size_for(nb_desc, max_desc_of(priv->caps));
  TxQueue* q = kept_queue_struct(priv->kept_txq[idx], "mana_txq", sock);
  // One allocation: the mbuf ring, then the descriptors (n is a power of two >= kMinDesc, so
  // both start on a cache line).
  static_assert(sizeof(rte_mbuf*) * kMinDesc % RTE_CACHE_LINE_SIZE == 0);
  auto* mbufs = static_cast<rte_mbuf**>(rte_zmalloc_socket(
      "mana_txq_ring", n * (sizeof(rte_mbuf*) + sizeof(TxDesc)), RTE_CACHE_LINE_SIZE, sock));
  auto* descs = mbufs == nullptr ? nullptr : reinterpret_cast<TxDesc*>(mbufs + n);
  if (q == nullptr || mbufs == nullptr) {
    rte_free(mbufs);
    MANA_DRV_LOG(ERR, "port %u TX queue %u: out of DPDK memory on socket %d", priv->port_id, idx,
                 sock);
    return -ENOMEM;
  }
  if (int rc = set_thresholds(*q, *priv, idx, n, *conf); rc != 0) {
    rte_free(mbufs);
    return rc;
  }
  q->mbufs = mbufs;
  q->descs = descs;
  q->desc_mask = n - 1;
  q->seeded_flag = seeded_flag();
  q->nb_desc = n;
  q->max_sge = RTE_MIN(priv->caps.max_sge, hw::kMaxTxSge);
  q->port_id = priv->port_id;
  q->queue_id = idx;
  q->priv = priv;
  q->socket = sock;
  q->deferred_start = conf->tx_deferred_start;
  mr_queue_cache_reset(q->mr);
  // A TX queue cannot know its pools: register every pool now (later ones on their READY event),
  // so that the data path does not. A failure is retried there, for that pool's buffers only.
  if (mr_register_all_mempools(priv->mr, verbs_registrar(priv->pd)) != 0)
    MANA_DRV_LOG(WARNING, "port %u TX queue %u: some mempools are not registered yet",
                 priv->port_id, idx);
  dev->data->tx_queues[idx] = q;
  log_ring_size(*priv, "TX", idx, n, nb_desc);
  return 0;
}

void tx_queue_release(rte_eth_dev* dev, uint16_t idx) {
  TxQueue* q = txq_of(dev, idx);
  if (q == nullptr) return;
  // Stopped ports only (the gate is closed already); the struct stays (kept_queues.h).
  gate_close(q->gate, kGateTimeoutMs);
  destroy_queue(*q);
  rte_free(q->mbufs);
  q->mbufs = nullptr;
  q->descs = nullptr;
  dev->data->tx_queues[idx] = nullptr;
}

int tx_queues_start(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  const uint64_t offloads = dev->data->dev_conf.txmode.offloads;
  const bool multi_seg = offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
  int rc = 0;
  for (uint16_t i = 0; i < dev->data->nb_tx_queues && rc == 0; i++) {
    TxQueue& q = *txq_of(dev, i);
    q.max_segs = multi_seg ? q.max_sge : 1;
    q.fast_free = (offloads & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) != 0;
    q.tso = (offloads & RTE_ETH_TX_OFFLOAD_TCP_TSO) != 0;
    rc = create_queue(priv, q);
  }
  if (rc != 0) tx_queues_stop(dev);
  return rc;
}

void tx_queues_stop(rte_eth_dev* dev) {
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    if (TxQueue* q = txq_of(dev, i); q != nullptr) destroy_queue(*q);
}

}  // namespace mana
