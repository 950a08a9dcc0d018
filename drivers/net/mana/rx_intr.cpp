// SPDX-License-Identifier: BSD-3-Clause
#include "rx_intr.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include <ethdev_driver.h>
#include <infiniband/verbs.h>
#include <rte_interrupts.h>

#include "mana_log.h"
#include "priv.h"

namespace mana {
namespace {

bool wants_rx_intr(const rte_eth_dev* dev) { return dev->data->dev_conf.intr_conf.rxq != 0; }

}  // namespace

int rx_intr_create_channel(rte_eth_dev* dev, RxQueue& q) {
  if (!wants_rx_intr(dev)) return 0;
  PortPriv* priv = priv_of(dev);
  q.ib_channel = ibv_create_comp_channel(priv->ctx);
  if (q.ib_channel == nullptr) {
    const int err = errno ? errno : ENOMEM;
    MANA_DRV_LOG(ERR, "port %u RX queue %u: cannot create a completion channel: %s", priv->port_id,
                 q.queue_id, strerror(err));
    return -err;
  }
  const int flags = fcntl(q.ib_channel->fd, F_GETFL);
  if (flags < 0 || fcntl(q.ib_channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    const int err = errno;
    MANA_DRV_LOG(ERR, "port %u RX queue %u: cannot make the completion channel non-blocking: %s",
                 priv->port_id, q.queue_id, strerror(err));
    return -err;
  }
  return 0;
}

void rx_intr_destroy_channel(RxQueue& q) {
  if (q.ib_channel != nullptr) ibv_destroy_comp_channel(q.ib_channel);
  q.ib_channel = nullptr;
}

int rx_intr_vector_setup(rte_eth_dev* dev) {
  if (!wants_rx_intr(dev)) return 0;
  PortPriv* priv = priv_of(dev);
  const uint16_t n = dev->data->nb_rx_queues;
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  int rc = h ? 0 : -ENOMEM;
  if (rc == 0) rc = rte_intr_type_set(h, RTE_INTR_HANDLE_EXT);
  if (rc == 0) rc = rte_intr_vec_list_alloc(h, "mana_rx_intr", n);
  for (uint16_t i = 0; i < n && rc == 0; i++) {
    rc = rte_intr_vec_list_index_set(h, i, RTE_INTR_VEC_RXTX_OFFSET + i);
    if (rc == 0) rc = rte_intr_efds_index_set(h, i, rxq_of(dev, i)->ib_channel->fd);
  }
  if (rc == 0) rc = rte_intr_nb_efd_set(h, n);
  if (rc == 0) rc = rte_intr_max_intr_set(h, n + 1);
  if (rc != 0) {
    MANA_DRV_LOG(ERR, "port %u: cannot set up the RX interrupt vector: %s", priv->port_id,
                 strerror(-rc));
    if (h != nullptr) {
      rte_intr_vec_list_free(h);
      rte_intr_instance_free(h);
    }
    return rc;
  }
  priv->rx_intr = h;
  dev->intr_handle = h;
  return 0;
}

void rx_intr_vector_teardown(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  if (priv->rx_intr == nullptr) return;
  if (dev->intr_handle == priv->rx_intr) dev->intr_handle = nullptr;
  rte_intr_vec_list_free(priv->rx_intr);
  rte_intr_instance_free(priv->rx_intr);
  priv->rx_intr = nullptr;
}

// Arms the CQ: the NIC signals the channel once a CQE exists at or after the consumer index.
int rx_queue_intr_enable(rte_eth_dev* dev, uint16_t idx) {
  RxQueue& q = *rxq_of(dev, idx);
  if (q.ib_channel == nullptr) return -EINVAL;
  ring_cq_doorbell(process_private_of(q.port_id).db_page, q.cq, true);
  return 0;
}

int rx_queue_intr_disable(rte_eth_dev* dev, uint16_t idx) {
  RxQueue& q = *rxq_of(dev, idx);
  if (q.ib_channel == nullptr) return -EINVAL;
  ibv_cq* cq;
  void* ctx;
  if (ibv_get_cq_event(q.ib_channel, &cq, &ctx) != 0)
    return errno == EAGAIN ? 0 : -errno;  // nothing pending
  ibv_ack_cq_events(cq, 1);
  return 0;
}

}  // namespace mana
