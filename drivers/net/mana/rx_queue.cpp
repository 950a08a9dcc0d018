// SPDX-License-Identifier: BSD-3-Clause
#include "rx_queue.h"

#include <cerrno>
#include <cstring>

#include <ethdev_driver.h>
#include <infiniband/manadv.h>
#include <infiniband/verbs.h>
#include <rte_malloc.h>

#include "kept_queues.h"
#include "mana_log.h"
#include "port_owner.h"
#include "queue_create.h"
#include "rx_intr.h"

namespace mana {

uint64_t rss_fields_mask(uint64_t rss_hf) {
  if (rss_hf == 0) return IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
  uint64_t m = 0;
  if (rss_hf & (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP))
    m |= IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
  if (rss_hf & (RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_TCP | RTE_ETH_RSS_NONFRAG_IPV6_UDP))
    m |= IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6;
  if (rss_hf & (RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV6_TCP))
    m |= IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP;
  if (rss_hf & (RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP))
    m |= IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP;
  return m;
}

uint16_t rss_table_queue(const PortPriv& priv, uint16_t nb_rxq, uint16_t pos) {
  return priv.reta_queues == nb_rxq ? priv.reta[pos] : pos;
}

namespace {

// Fills the whole RQ with fresh mbufs and rings the doorbell once.
int fill_ring(RxQueue& q, void* db_page, const MrRegistrar& r) {
  if (int rc = rx_ring_fill(q, r); rc != 0) return rc;
  ring_rq_doorbell(db_page, q.rq);
  return 0;
}

// Burst size the RX refill waits for by default: the ethdev default burst.
constexpr uint32_t kDefaultFreeThresh = 32;

// The one lkey covering every memory chunk of the queue's pool, or kInvalidLkey (several MRs, or
// a chunk not registered: the burst then looks each buffer up).
struct LkeyScan {
  RxQueue* q;
  const MrRegistrar* r;
  uint32_t lkey;
  bool first;
};
void scan_chunk_lkey(rte_mempool*, void* arg, rte_mempool_memhdr* chunk, unsigned) {
  auto* s = static_cast<LkeyScan*>(arg);
  const uint32_t lkey =
      mr_lookup(s->q->mr, s->q->priv->mr, reinterpret_cast<uintptr_t>(chunk->addr),
                static_cast<uint32_t>(chunk->len), s->q->mp, *s->r);
  if (s->first || lkey != s->lkey) s->lkey = s->first ? lkey : kInvalidLkey;
  s->first = false;
}
uint32_t pool_lkey(RxQueue& q, const MrRegistrar& r) {
  LkeyScan s{&q, &r, kInvalidLkey, true};
  rte_mempool_mem_iter(q.mp, scan_chunk_lkey, &s);
  return s.lkey;
}

// Where a pool's mbufs keep their frames: rte_pktmbuf_init puts every mbuf's buffer right after
// the mbuf and its private area, and a detach puts it back there, so buf_addr + headroom is the
// same offset from every mbuf. A pool of pinned external buffers (rte_pktmbuf_pool_create_extbuf)
// has its buffers elsewhere: 0, and the burst reads each buf_addr.
uint32_t pool_frame_offset(rte_mempool* mp) {
  if ((rte_pktmbuf_priv_flags(mp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF) != 0) return 0;
  return static_cast<uint32_t>(sizeof(rte_mbuf) + rte_pktmbuf_priv_size(mp) + RTE_PKTMBUF_HEADROOM);
}

// The rearm_data of a received mbuf, as rte_pktmbuf_reset leaves it.
uint64_t rearm_template(uint16_t port_id) {
  rte_mbuf m{};
  m.data_off = RTE_PKTMBUF_HEADROOM;
  rte_mbuf_refcnt_set(&m, 1);
  m.nb_segs = 1;
  m.port = port_id;
  uint64_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&m) + offsetof(rte_mbuf, rearm_data), sizeof(v));
  return v;
}
static_assert(offsetof(rte_mbuf, data_off) == offsetof(rte_mbuf, rearm_data) &&
              offsetof(rte_mbuf, port) + sizeof(uint16_t) == offsetof(rte_mbuf, rearm_data) + 8);

// Every WQE of the ring once (doc/hardware.md §4.4); refills then write the buffer address only.
void write_wqe_templates(RxQueue& q) {
  const hw::WqeHeader header = hw::WqeHeader::make(1, hw::kShortOobSize);
  const hw::Sge sge{0, q.lkey == kInvalidLkey ? 0 : q.lkey, q.buf_len};
  const uint32_t wqes = (q.rq.size_mask + 1) / hw::kBasicUnit;
  for (uint32_t i = 0; i < wqes; i++) {
    uint8_t* wqe = q.rq.ring + i * hw::kBasicUnit;
    std::memset(wqe, 0, hw::kBasicUnit);
    std::memcpy(wqe, &header, sizeof(header));
    std::memcpy(rx_wqe_sge(q.rq, i), &sge, sizeof(sge));
  }
}

int create_queue_objects(rte_eth_dev* dev, PortPriv& priv, RxQueue& q) {
  char what[48];
  if (int rc = use_dpdk_memory_for_queues(priv.ctx, q.socket); rc != 0) return rc;
  if (int rc = rx_intr_create_channel(dev, q); rc != 0) return rc;
  snprintf(what, sizeof(what), "RX queue %u CQ", q.queue_id);
  q.ib_cq = ibv_create_cq(priv.ctx, static_cast<int>(q.nb_desc), nullptr, q.ib_channel,
                          q.ib_channel ? q.queue_id : 0);
  if (q.ib_cq == nullptr) return log_queue_create_error(priv, what, errno);

  ibv_wq_init_attr attr{};
  attr.wq_type = IBV_WQT_RQ;
  attr.max_wr = q.nb_desc;
  attr.max_sge = 1;
  attr.pd = priv.parent_pd;
  attr.cq = q.ib_cq;
  snprintf(what, sizeof(what), "RX queue %u WQ", q.queue_id);
  q.ib_wq = ibv_create_wq(priv.ctx, &attr);
  if (q.ib_wq == nullptr) return log_queue_create_error(priv, what, errno);
  return 0;
}

int create_rss_qp(rte_eth_dev* dev, PortPriv& priv) {
  const uint16_t n = dev->data->nb_rx_queues;
  ibv_wq* wqs[kMaxRxQueues];
  for (uint16_t i = 0; i < n; i++) wqs[i] = rxq_of(dev, rss_table_queue(priv, n, i))->ib_wq;

  ibv_rwq_ind_table_init_attr tattr{};
  tattr.log_ind_tbl_size = log2_of_pow2(n);
  tattr.ind_tbl = wqs;
  priv.ind_table = ibv_create_rwq_ind_table(priv.ctx, &tattr);
  if (priv.ind_table == nullptr)
    return log_queue_create_error(priv, "RSS indirection table", errno);

  ibv_qp_init_attr_ex qattr{};
  qattr.qp_type = IBV_QPT_RAW_PACKET;
  qattr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE;
  qattr.pd = priv.parent_pd;
  qattr.rwq_ind_tbl = priv.ind_table;
  qattr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
  qattr.rx_hash_conf.rx_hash_key_len = hw::kRssKeySize;
  qattr.rx_hash_conf.rx_hash_key = priv.rss_key;
  qattr.rx_hash_conf.rx_hash_fields_mask = rss_fields_mask(priv.rss_hf);
  priv.rss_qp = ibv_create_qp_ex(priv.ctx, &qattr);
  if (priv.rss_qp == nullptr) return log_queue_create_error(priv, "RSS QP", errno);
  return 0;
}

// Queue ids become valid with the RSS QP (rdma-core >= 62 reports the CQ's as UINT32_MAX before,
// doc/hardware.md §9.21); read the geometry only then.
int bind_hardware_queue(PortPriv& priv, RxQueue& q) {
  manadv_cq cq{};
  manadv_rwq rwq{};
  manadv_obj obj{};
  obj.cq.in = q.ib_cq;
  obj.cq.out = &cq;
  obj.rwq.in = q.ib_wq;
  obj.rwq.out = &rwq;
  if (int rc = manadv_init_obj(&obj, MANADV_OBJ_CQ | MANADV_OBJ_RWQ); rc != 0) {
    MANA_DRV_LOG(ERR, "port %u RX queue %u: manadv_init_obj failed: %s", priv.port_id, q.queue_id,
                 strerror(rc));
    return -rc;
  }
  if (!is_pow2(cq.count) || !is_pow2(rwq.size) || rwq.count < q.nb_desc ||
      rwq.size < rwq.count * hw::kBasicUnit) {
    MANA_DRV_LOG(ERR, "port %u RX queue %u: unexpected queue geometry (CQ %u, RQ %u WQEs / %u B)",
                 priv.port_id, q.queue_id, cq.count, rwq.count, rwq.size);
    return -EPROTO;
  }
  if (!cq_id_assigned(priv, "RX", q.queue_id, cq.cq_id)) return -EPROTO;
  q.cq = make_completion_queue(static_cast<hw::Cqe*>(cq.buf), cq.count, cq.cq_id);
  q.rq = WorkQueue{static_cast<uint8_t*>(rwq.buf), rwq.size - 1, q.nb_desc, 0, 0, rwq.wq_id};
  if (priv.db_page == nullptr) priv.db_page = rwq.db_page;
  return 0;
}

void destroy_queue_objects(RxQueue& q) {
  if (q.ib_wq != nullptr) ibv_destroy_wq(q.ib_wq);
  if (q.ib_cq != nullptr) ibv_destroy_cq(q.ib_cq);
  rx_intr_destroy_channel(q);
  q.ib_wq = nullptr;
  q.ib_cq = nullptr;
  rx_ring_free(q);
  q.rq = WorkQueue{};
  q.cq = CompletionQueue{};
  q.partial_cqe = nullptr;
  q.partial_next = 0;
  mr_queue_cache_reset(q.mr);
}

}  // namespace

uint32_t rx_free_thresh_for(uint32_t requested, uint32_t ring) {
  const uint32_t t = requested != 0 ? requested : kDefaultFreeThresh;
  return RTE_MAX(1u, RTE_MIN(RTE_MIN(t, ring / 4), kMaxRxRefill));
}

int rx_ring_fill(RxQueue& q, const MrRegistrar& r) {
  mr_queue_cache_sync(q.mr, q.priv->mr);  // only its own pool's ranges: once per start is enough
  q.rearm = rearm_template(q.port_id);
  q.lkey = pool_lkey(q, r);
  q.frame_offset = pool_frame_offset(q.mp);
  q.recycled = 0;
  q.meta.variant = 0;
  write_wqe_templates(q);
  const uint32_t n = q.desc_mask + 1;
  rte_mbuf* bufs[kDefaultDesc];
  uint32_t posted = 0;
  while (posted < n) {
    const uint32_t chunk = RTE_MIN(n - posted, static_cast<uint32_t>(RTE_DIM(bufs)));
    if (rte_pktmbuf_alloc_bulk(q.mp, bufs, chunk) != 0) {
      MANA_DRV_LOG(ERR,
                   "port %u RX queue %u: mempool %s has fewer than %u free mbufs to fill the ring: "
                   "make the pool larger or the ring smaller",
                   q.port_id, q.queue_id, q.mp->name, n);
      return -ENOMEM;
    }
    for (uint32_t i = 0; i < chunk; i++) {
      const uint32_t lkey = rx_buffer_lkey(q, bufs[i], r);
      if (lkey == kInvalidLkey) {
        rte_pktmbuf_free_bulk(&bufs[i], chunk - i);
        MANA_DRV_LOG(ERR, "port %u RX queue %u: mbufs of mempool %s are not registered", q.port_id,
                     q.queue_id, q.mp->name);
        return -EFAULT;
      }
      // A pool whose own init put a buffer elsewhere: every buf_addr is read.
      if (q.frame_offset != 0 &&
          reinterpret_cast<uintptr_t>(bufs[i]->buf_addr) + RTE_PKTMBUF_HEADROOM !=
              reinterpret_cast<uintptr_t>(bufs[i]) + q.frame_offset)
        q.frame_offset = 0;
      uint8_t* sge = rx_post(q, bufs[i]);
      if (q.lkey == kInvalidLkey) rx_set_lkey(sge, lkey);
    }
    posted += chunk;
  }
  return 0;
}

// Posted mbufs are those of WQEs [tail, head); a consumed WQE's slot keeps the delivered mbuf (the
// application's now) unless the WQE failed: then the slot holds its own buffer, tagged, until the
// refill reposts it.
void rx_ring_free(RxQueue& q) {
  if (q.mbufs == nullptr) return;
  for (uint32_t i = q.rq.tail_bu; i != q.rq.head_bu; i++) {
    rte_pktmbuf_free(q.mbufs[i & q.desc_mask]);
    q.mbufs[i & q.desc_mask] = nullptr;
  }
  for (uint32_t i = 0; q.recycled != 0 && i <= q.desc_mask; i++) {
    const auto v = reinterpret_cast<uintptr_t>(q.mbufs[i]);
    if ((v & kRecycledTag) == 0) continue;
    rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(v & ~kRecycledTag));
    q.recycled--;
  }
  for (uint32_t i = 0; i <= q.desc_mask; i++) q.mbufs[i] = nullptr;
}

int rx_queue_setup(rte_eth_dev* dev, uint16_t idx, uint16_t nb_desc, unsigned socket,
                   const rte_eth_rxconf* conf, rte_mempool* mp) {
  PortPriv* priv = priv_of(dev);
  // One buffer per frame (no scattered RX, doc/hardware.md §4.4): it must hold the largest frame
  // of the port's MTU (mtu_set refuses a larger MTU while this queue is set up), unless another
  // driver owns the port (mtu.h: the owner keeps its VF; dev_start warns).
  const uint32_t data_room = rte_pktmbuf_data_room_size(mp);
  const uint32_t frame = rx_frame_len(dev->data->mtu);
  const uint32_t needed = rx_data_room_for(dev->data->mtu);
  if (data_room < needed && !owned_by_another_driver(priv->port_id)) {
    MANA_DRV_LOG(ERR,
                 "port %u RX queue %u: mempool %s has %u bytes of data room, frames need %u "
                 "(MTU %u + %u, max_rx_pktlen %u, + headroom %u; no scattered RX): create the "
                 "pool with a data room of at least %u (testpmd: --mbuf-size=%u)",
                 priv->port_id, idx, mp->name, data_room, needed, dev->data->mtu, kFrameOverhead,
                 frame, RTE_PKTMBUF_HEADROOM, needed, needed);
    return -EINVAL;
  }
  const int sock =
      socket == static_cast<unsigned>(SOCKET_ID_ANY) ? priv->socket : static_cast<int>(socket);
  const uint32_t n = ring_size_for(nb_desc, max_desc_of(priv->caps));
  RxQueue* q = kept_queue_struct(priv->kept_rxq[idx], "mana_rxq", sock);
  rte_mbuf** ring = static_cast<rte_mbuf**>(
      rte_zmalloc_socket("mana_rxq_ring", n * sizeof(rte_mbuf*), RTE_CACHE_LINE_SIZE, sock));
  if (q == nullptr || ring == nullptr) {
    rte_free(ring);
    MANA_DRV_LOG(ERR, "port %u RX queue %u: out of DPDK memory on socket %d", priv->port_id, idx,
                 sock);
    return -ENOMEM;
  }
  q->mbufs = ring;
  q->desc_mask = n - 1;
  q->nb_desc = n;
  q->buf_len = data_room - RTE_PKTMBUF_HEADROOM;
  q->free_thresh = static_cast<uint16_t>(rx_free_thresh_for(conf->rx_free_thresh, n));
  q->port_id = priv->port_id;
  q->queue_id = idx;
  q->mp = mp;
  q->priv = priv;
  q->socket = sock;
  q->deferred_start = conf->rx_deferred_start;
  mr_queue_cache_reset(q->mr);
  // Register the pool now, on the control path, so that the data path finds it.
  if (int rc = mr_register_mempool(priv->mr, mp, verbs_registrar(priv->pd)); rc != 0) {
    MANA_DRV_LOG(ERR, "port %u RX queue %u: cannot register mempool %s: %s", priv->port_id, idx,
                 mp->name, strerror(-rc));
    rte_free(ring);
    q->mbufs = nullptr;
    return rc;
  }
  dev->data->rx_queues[idx] = q;
  log_ring_size(*priv, "RX", idx, n, nb_desc);
  return 0;
}

void rx_queue_release(rte_eth_dev* dev, uint16_t idx) {
  RxQueue* q = rxq_of(dev, idx);
  if (q == nullptr) return;
  // Stopped ports only (the gate is closed already); the struct stays (kept_queues.h).
  gate_close(q->gate, kGateTimeoutMs);
  destroy_queue_objects(*q);
  rte_free(q->mbufs);
  q->mbufs = nullptr;
  dev->data->rx_queues[idx] = nullptr;
}

int rx_queues_start(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  const uint16_t n = dev->data->nb_rx_queues;
  int rc = 0;
  for (uint16_t i = 0; i < n && rc == 0; i++) rc = create_queue_objects(dev, priv, *rxq_of(dev, i));
  if (rc == 0) rc = create_rss_qp(dev, priv);
  for (uint16_t i = 0; i < n && rc == 0; i++) rc = bind_hardware_queue(priv, *rxq_of(dev, i));
  const MrRegistrar reg = verbs_registrar(priv.pd);
  for (uint16_t i = 0; i < n && rc == 0; i++) rc = fill_ring(*rxq_of(dev, i), priv.db_page, reg);
  if (rc == 0) rc = rx_intr_vector_setup(dev);
  if (rc != 0) rx_queues_stop(dev);
  return rc;
}

void rx_queues_stop(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  rx_intr_vector_teardown(dev);
  if (priv.rss_qp != nullptr) ibv_destroy_qp(priv.rss_qp);
  if (priv.ind_table != nullptr) ibv_destroy_rwq_ind_table(priv.ind_table);
  priv.rss_qp = nullptr;
  priv.ind_table = nullptr;
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    if (RxQueue* q = rxq_of(dev, i); q != nullptr) destroy_queue_objects(*q);
}

}  // namespace mana
