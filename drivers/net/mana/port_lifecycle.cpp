// SPDX-License-Identifier: BSD-3-Clause
#include "port_lifecycle.h"

#include <cerrno>
#include <cstring>

#include <ethdev_driver.h>

#include "hw_counters.h"
#include "mana_log.h"
#include "netdev_mtu.h"
#include "rx_queue.h"
#include "tx_queue.h"

namespace mana {
namespace {

// vendor_part_id of the Ethernet (RAW QP) device since the 2025 device split; 0 before it.
constexpr uint32_t kVendorPartEthernet = 2;

}  // namespace

DeviceCaps caps_of(const ibv_device_attr_ex& attr) {
  DeviceCaps c;
  c.max_qp = static_cast<uint32_t>(attr.orig_attr.max_qp);
  c.max_qp_wr = static_cast<uint32_t>(attr.orig_attr.max_qp_wr);
  c.max_cqe = static_cast<uint32_t>(attr.orig_attr.max_cqe);
  c.max_sge = static_cast<uint32_t>(attr.orig_attr.max_sge);
  c.max_mr = static_cast<uint32_t>(attr.orig_attr.max_mr);
  c.max_mr_size = attr.orig_attr.max_mr_size;
  return c;
}

bool query_ethernet_device(ibv_device* ibdev, const char* pci_name, ibv_device_attr_ex* attr) {
  ibv_context* ctx = ibv_open_device(ibdev);
  if (ctx == nullptr) {
    MANA_INIT_LOG(ERR, "%s: cannot open RDMA device %s: %s: check permissions of /dev/infiniband",
                  pci_name, ibdev->name, strerror(errno));
    return false;
  }
  *attr = ibv_device_attr_ex{};
  const int rc = ibv_query_device_ex(ctx, nullptr, attr);
  ibv_close_device(ctx);
  if (rc != 0) {
    MANA_INIT_LOG(ERR, "%s: cannot query RDMA device %s: %s", pci_name, ibdev->name, strerror(rc));
    return false;
  }
  if (attr->orig_attr.vendor_part_id != 0 &&
      (attr->orig_attr.vendor_part_id != kVendorPartEthernet || attr->raw_packet_caps == 0)) {
    MANA_INIT_LOG(INFO, "%s: skipping RDMA device %s (vendor part %u): not the Ethernet device",
                  pci_name, ibdev->name, attr->orig_attr.vendor_part_id);
    return false;
  }
  const DeviceCaps caps = caps_of(*attr);
  if (max_desc_of(caps) < kMinDesc || caps.max_sge == 0 || caps.max_qp == 0) {
    MANA_INIT_LOG(ERR,
                  "%s: RDMA device %s reports unusable limits (max_qp %u, max_qp_wr %u, max_cqe "
                  "%u, max_sge %u)",
                  pci_name, ibdev->name, caps.max_qp, caps.max_qp_wr, caps.max_cqe, caps.max_sge);
    return false;
  }
  return true;
}

int open_port_verbs(PortPriv& priv, ibv_device* ibdev) {
  priv.ctx = ibv_open_device(ibdev);
  if (priv.ctx == nullptr) {
    MANA_INIT_LOG(ERR, "%s: cannot open RDMA device %s: %s", priv.name, ibdev->name,
                  strerror(errno));
    return -ENODEV;
  }
  priv.pd = ibv_alloc_pd(priv.ctx);
  if (priv.pd == nullptr) {
    MANA_INIT_LOG(ERR, "%s: cannot allocate a protection domain: %s", priv.name, strerror(errno));
    return -ENOMEM;
  }
  ibv_parent_domain_init_attr pattr{};
  pattr.pd = priv.pd;
  pattr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
  pattr.pd_context = reinterpret_cast<void*>(static_cast<uintptr_t>(priv.ib_port));
  priv.parent_pd = ibv_alloc_parent_domain(priv.ctx, &pattr);
  if (priv.parent_pd == nullptr) {
    MANA_INIT_LOG(ERR, "%s: cannot allocate a parent domain: %s", priv.name, strerror(errno));
    return -ENOMEM;
  }
  snprintf(priv.ibdev_path, sizeof(priv.ibdev_path), "%s", ibdev->ibdev_path);
  hw_counters_attach(priv, ibdev->ibdev_path);
  netdev_mtu_attach(priv, ibdev->ibdev_path);
  return 0;
}

void close_port_verbs(PortPriv& priv) {
  if (priv.parent_pd != nullptr) ibv_dealloc_pd(priv.parent_pd);
  if (priv.pd != nullptr) ibv_dealloc_pd(priv.pd);
  if (priv.ctx != nullptr) ibv_close_device(priv.ctx);
  priv.parent_pd = nullptr;
  priv.pd = nullptr;
  priv.ctx = nullptr;
}

int port_queues_create(rte_eth_dev* dev) {
  if (int rc = tx_queues_start(dev); rc != 0) return rc;
  if (dev->data->nb_rx_queues != 0) {
    if (int rc = rx_queues_start(dev); rc != 0) {
      tx_queues_stop(dev);
      return rc;
    }
  }
  return 0;
}

// RX first, while the raw QPs still hold the vPort: destroying the RSS QP disables the whole
// vPort's RX steering on kernels with dbeb256e8dd8, which must happen before the vPort is free
// for the kernel netdev (netvsc reopens the VF) to program steering of its own; the verbs core
// then allows only RSS QP -> table -> WQs -> CQs (doc/hardware.md §9.12, §9.22).
void port_queues_destroy(rte_eth_dev* dev) {
  rx_queues_stop(dev);
  tx_queues_stop(dev);
}

namespace {
// `only_started`: the queues whose state is started (a stopped queue's gate stays closed).
template <typename F>
void for_each_gate(rte_eth_dev* dev, F f, bool only_started = false) {
  const rte_eth_dev_data& d = *dev->data;
  for (uint16_t i = 0; i < d.nb_rx_queues; i++)
    if (auto* q = rxq_of(dev, i);
        q != nullptr && (!only_started || d.rx_queue_state[i] == RTE_ETH_QUEUE_STATE_STARTED))
      f(q->gate);
  for (uint16_t i = 0; i < d.nb_tx_queues; i++)
    if (auto* q = txq_of(dev, i);
        q != nullptr && (!only_started || d.tx_queue_state[i] == RTE_ETH_QUEUE_STATE_STARTED))
      f(q->gate);
}
}  // namespace

void close_port_gates(rte_eth_dev* dev) {
  for_each_gate(dev, [dev](QueueGate& g) {
    if (!gate_close(g, kGateTimeoutMs))
      MANA_DRV_LOG(ERR,
                   "port %u: a burst stayed inside a queue for %u ms (a process that died in "
                   "rx/tx_burst?): going on anyway",
                   dev->data->port_id, kGateTimeoutMs);
  });
}

void open_port_gates(rte_eth_dev* dev) { for_each_gate(dev, gate_open, true); }

}  // namespace mana
