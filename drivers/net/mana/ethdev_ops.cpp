// ethdev operations of a port: configure, device info, link, start/stop/close (doc/hardware.md
// §2.3, §2.4, §2.8, §5.3). Queue, RSS and statistics operations live in their own files.
#include "ethdev_ops.h"

#include <cerrno>
#include <cstring>
#include <initializer_list>

#include <ethdev_driver.h>
#include <infiniband/verbs.h>
#include <rte_malloc.h>

#include "burst.h"
#include "kept_queues.h"
#include "mana_log.h"
#include "mp.h"
#include "mtu.h"
#include "priv.h"
#include "rss.h"
#include "rx_cqe.h"
#include "rx_intr.h"
#include "rx_queue.h"
#include "stats.h"
#include "tx_queue.h"

namespace mana {
namespace {

constexpr uint64_t kRxOffloads =
    RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH | RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
constexpr uint64_t kTxOffloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
                                 RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
                                 RTE_ETH_TX_OFFLOAD_VLAN_INSERT;
constexpr uint32_t kDefaultBurst = 32;

uint32_t max_rx_queues(const DeviceCaps& caps) { return RTE_MIN(caps.max_qp, kMaxRxQueues); }
uint32_t max_tx_queues(const DeviceCaps& caps) { return RTE_MIN(caps.max_qp, UINT16_MAX); }

int dev_configure(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  rte_eth_conf& conf = dev->data->dev_conf;
  const uint16_t nb_rxq = dev->data->nb_rx_queues;
  const uint16_t nb_txq = dev->data->nb_tx_queues;
  if (nb_rxq != 0 && (!is_pow2(nb_rxq) || nb_rxq > max_rx_queues(priv->caps))) {
    MANA_INIT_LOG(ERR,
                  "port %u: %u RX queues: the RSS table needs a power of two of at most %u RX "
                  "queues",
                  priv->port_id, nb_rxq, max_rx_queues(priv->caps));
    return -EINVAL;
  }
  // Only raw-QP (TX queue) creation configures the vPort; recent kernels refuse the RSS QP of the
  // RX queues with EINVAL unless a raw QP exists on the same PD and port (doc/hardware.md §2.4).
  if (nb_txq == 0) {
    MANA_INIT_LOG(ERR,
                  "port %u: 0 TX queues: the NIC's vPort is configured by TX queue creation, so "
                  "an RX-only port cannot start: configure at least 1 TX queue (it may stay idle)",
                  priv->port_id);
    return -EINVAL;
  }
  if (nb_txq > max_tx_queues(priv->caps)) {
    MANA_INIT_LOG(ERR, "port %u: %u TX queues: the device has at most %u", priv->port_id, nb_txq,
                  max_tx_queues(priv->caps));
    return -EINVAL;
  }
  if (conf.rxmode.mq_mode & RTE_ETH_MQ_RX_RSS_FLAG)
    conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;

  const rte_eth_rss_conf& rss = conf.rx_adv_conf.rss_conf;
  if (rss.rss_key != nullptr && rss.rss_key_len != hw::kRssKeySize) {
    MANA_INIT_LOG(ERR, "port %u: RSS key must be %u bytes, not %u", priv->port_id, hw::kRssKeySize,
                  rss.rss_key_len);
    return -EINVAL;
  }
  if (rss.rss_hf & ~kSupportedRssHf) {
    MANA_INIT_LOG(ERR,
                  "port %u: RSS hash types %#" PRIx64 " not supported (supported: %#" PRIx64 ")",
                  priv->port_id, rss.rss_hf & ~kSupportedRssHf, kSupportedRssHf);
    return -EINVAL;
  }
  if (rss.rss_key != nullptr) std::memcpy(priv->rss_key, rss.rss_key, hw::kRssKeySize);
  priv->rss_hf = rss.rss_hf;
  return 0;
}

int dev_infos_get(rte_eth_dev* dev, rte_eth_dev_info* info) {
  const PortPriv* priv = priv_of(dev);
  const DeviceCaps& caps = priv->caps;
  info->max_rx_queues = static_cast<uint16_t>(max_rx_queues(caps));
  info->max_tx_queues = static_cast<uint16_t>(max_tx_queues(caps));
  info->min_rx_bufsize = kMinRxBufSize;
  info->max_rx_pktlen = kMaxRxPktLen;
  info->min_mtu = RTE_ETHER_MIN_MTU;
  info->max_mtu = kMaxMtu;
  info->max_mac_addrs = 1;
  info->rx_offload_capa = kRxOffloads;
  info->tx_offload_capa = kTxOffloads;
  info->rx_queue_offload_capa = 0;
  info->tx_queue_offload_capa = 0;
  info->reta_size = hw::kRssTableSize;
  info->hash_key_size = hw::kRssKeySize;
  info->flow_type_rss_offloads = kSupportedRssHf;
  info->speed_capa = RTE_ETH_LINK_SPEED_100G;

  const uint32_t max_desc = max_desc_of(caps);
  rte_eth_desc_lim lim{};
  lim.nb_max = static_cast<uint16_t>(max_desc);
  lim.nb_min = kMinDesc;
  lim.nb_align = kDescAlign;
  lim.nb_seg_max = static_cast<uint16_t>(caps.max_sge);
  lim.nb_mtu_seg_max = static_cast<uint16_t>(caps.max_sge);
  info->rx_desc_lim = lim;
  info->tx_desc_lim = lim;

  info->default_rxconf.rx_drop_en = 1;
  info->default_rxconf.rx_free_thresh = kDefaultBurst;
  info->default_txconf.tx_rs_thresh = kDefaultBurst;
  info->default_txconf.tx_free_thresh = kDefaultBurst;
  const uint16_t ring = static_cast<uint16_t>(RTE_MIN(kDefaultDesc, max_desc));
  for (rte_eth_dev_portconf* pc : {&info->default_rxportconf, &info->default_txportconf}) {
    pc->burst_size = kDefaultBurst;
    pc->ring_size = ring;
    pc->nb_queues = 1;
  }
  return 0;
}

// The vPort is up as long as the VF exists; the NIC reports no speed changes (doc/hardware.md
// §5.1).
int link_update(rte_eth_dev* dev, int /*wait_to_complete*/) {
  rte_eth_link link{};
  link.link_speed = RTE_ETH_SPEED_NUM_100G;
  link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
  link.link_autoneg = RTE_ETH_LINK_FIXED;
  link.link_status = RTE_ETH_LINK_UP;
  return rte_eth_linkstatus_set(dev, &link);
}

const uint32_t* supported_ptypes(rte_eth_dev* /*dev*/) { return rx_supported_ptypes(); }

template <typename F>
void for_each_gate(rte_eth_dev* dev, F f) {
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    if (auto* q = static_cast<RxQueue*>(dev->data->rx_queues[i]); q != nullptr) f(q->gate);
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    if (auto* q = static_cast<TxQueue*>(dev->data->tx_queues[i]); q != nullptr) f(q->gate);
}

bool all_queues_set_up(rte_eth_dev* dev) {
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    if (dev->data->rx_queues[i] == nullptr) {
      MANA_INIT_LOG(ERR, "port %u: RX queue %u is not set up", dev->data->port_id, i);
      return false;
    }
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    if (dev->data->tx_queues[i] == nullptr) {
      MANA_INIT_LOG(ERR, "port %u: TX queue %u is not set up", dev->data->port_id, i);
      return false;
    }
  return true;
}

int dev_start(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  if (!all_queues_set_up(dev)) return -EINVAL;
  // TX first: the raw QPs configure the vPort that the RSS QP of the RX queues needs.
  if (int rc = tx_queues_start(dev); rc != 0) return rc;
  if (dev->data->nb_rx_queues != 0) {
    if (int rc = rx_queues_start(dev); rc != 0) {
      tx_queues_stop(dev);
      return rc;
    }
  }
  static_cast<ProcessPrivate*>(dev->process_private)->db_page = priv->db_page;
  for_each_gate(dev, gate_open);
  dev->rx_pkt_burst = select_rx_burst(dev->data->dev_conf.rxmode.offloads);
  dev->tx_pkt_burst = select_port_tx_burst(dev);
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
  priv->started = true;
  mp_notify_secondaries_start(dev);
  link_update(dev, 0);
  return 0;
}

int dev_stop(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  // No burst of any process may be inside a queue once its objects go (queue_gate.h).
  for_each_gate(dev, [dev](QueueGate& g) {
    if (!gate_close(g, kGateTimeoutMs))
      MANA_DRV_LOG(ERR,
                   "port %u: a burst stayed inside a queue for %u ms (a process that died in "
                   "rx/tx_burst?): stopping anyway",
                   dev->data->port_id, kGateTimeoutMs);
  });
  dev->rx_pkt_burst = rx_burst_stopped;
  dev->tx_pkt_burst = tx_burst_stopped;
  mp_notify_secondaries_stop(dev);
  tx_queues_stop(dev);
  rx_queues_stop(dev);
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
  priv->started = false;
  return 0;
}

int dev_close(rte_eth_dev* dev) {
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
    mp_detach_secondary(dev);
    rte_free(dev->process_private);
    dev->process_private = nullptr;
    return 0;
  }
  PortPriv* priv = priv_of(dev);
  if (priv->started) dev_stop(dev);
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++) rx_queue_release(dev, i);
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++) tx_queue_release(dev, i);
  mr_events_unsubscribe(&static_cast<ProcessPrivate*>(dev->process_private)->mr_events);
  free_kept_queues(*priv);
  close_port_resources(*priv);
  rte_free(dev->process_private);
  dev->process_private = nullptr;
  return 0;
}

int tx_done_cleanup(void* queue, uint32_t /*free_cnt*/) {
  auto& q = *static_cast<TxQueue*>(queue);
  if (!gate_enter(q.gate, process_private_of(q.port_id).bursts_open)) return 0;
  const uint32_t n = tx_reclaim(q);
  gate_leave(q.gate);
  return static_cast<int>(n);
}

const eth_dev_ops kPrimaryOps = [] {
  eth_dev_ops o{};
  o.dev_configure = dev_configure;
  o.dev_start = dev_start;
  o.dev_stop = dev_stop;
  o.dev_close = dev_close;
  o.link_update = link_update;
  o.stats_get = stats_get;
  o.stats_reset = stats_reset;
  o.xstats_get = xstats_get;
  o.xstats_reset = xstats_reset;
  o.xstats_get_names = xstats_get_names;
  o.dev_infos_get = dev_infos_get;
  o.dev_supported_ptypes_get = supported_ptypes;
  o.rx_queue_setup = rx_queue_setup;
  o.rx_queue_release = rx_queue_release;
  o.rx_queue_intr_enable = rx_queue_intr_enable;
  o.rx_queue_intr_disable = rx_queue_intr_disable;
  o.tx_queue_setup = tx_queue_setup;
  o.tx_queue_release = tx_queue_release;
  o.tx_done_cleanup = tx_done_cleanup;
  o.mtu_set = mtu_set;
  o.reta_query = reta_query;
  o.rss_hash_update = rss_hash_update;
  o.rss_hash_conf_get = rss_hash_conf_get;
  return o;
}();

// A secondary process reads state but does not change the device.
const eth_dev_ops kSecondaryOps = [] {
  eth_dev_ops o{};
  o.dev_close = dev_close;
  o.tx_done_cleanup = tx_done_cleanup;  // a secondary sending on its own queues reclaims them
  o.stats_get = stats_get;
  o.xstats_get = xstats_get;
  o.xstats_get_names = xstats_get_names;
  o.dev_infos_get = dev_infos_get;
  o.link_update = link_update;
  o.dev_supported_ptypes_get = supported_ptypes;
  o.reta_query = reta_query;
  o.rss_hash_conf_get = rss_hash_conf_get;
  return o;
}();

}  // namespace

const eth_dev_ops* primary_dev_ops() { return &kPrimaryOps; }
const eth_dev_ops* secondary_dev_ops() { return &kSecondaryOps; }

uint32_t max_desc_of(const DeviceCaps& caps) {
  uint32_t m = RTE_MIN(caps.max_qp_wr, caps.max_cqe);
  if (caps.provider_max_wr != 0) m = RTE_MIN(m, caps.provider_max_wr);
  m = RTE_MIN(m, static_cast<uint32_t>(UINT16_MAX));
  return RTE_ALIGN_FLOOR(m, kDescAlign);
}

uint32_t ring_size_for(uint32_t nb_desc, uint32_t max_desc) {
  if (nb_desc < kMinDesc) nb_desc = kMinDesc;
  uint32_t n = rte_align32pow2(nb_desc);
  if (n > max_desc) n = rte_align32prevpow2(max_desc);
  return n;
}

}  // namespace mana
