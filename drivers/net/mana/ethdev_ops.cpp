// SPDX-License-Identifier: BSD-3-Clause
// ethdev operations of a port: configure, device info, link, start/stop/close (doc/hardware.md
// §2.3, §2.4, §2.8, §5.3). Queue, RSS and statistics operations live in their own files.
#include "ethdev_ops.h"

#include <cerrno>
#include <cstring>
#include <initializer_list>

#include <ethdev_driver.h>
#include <rte_malloc.h>

#include "burst.h"
#include "descriptor_status.h"
#include "dpdk_compat.h"
#include "kept_queues.h"
#include "mana_log.h"
#include "mp.h"
#include "mtu.h"
#include "port_lifecycle.h"
#include "port_owner.h"
#include "priv.h"
#include "queue_control.h"
#include "queue_info.h"
#include "recovery.h"
#include "rss.h"
#include "rx_cqe.h"
#include "rx_intr.h"
#include "rx_mode.h"
#include "rx_queue.h"
#include "stats.h"
#include "tx_queue.h"
#include "link_state.h"
#include "tx_watchdog.h"
#include "vlan_offload.h"

namespace mana {
namespace {

constexpr uint64_t kRxOffloads =
    RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH | RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
constexpr uint64_t kTxOffloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
                                 RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
                                 RTE_ETH_TX_OFFLOAD_VLAN_INSERT |
                                 RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE | RTE_ETH_TX_OFFLOAD_TCP_TSO;
constexpr uint32_t kDefaultBurst = 32;

uint32_t max_rx_queues(const DeviceCaps& caps) { return RTE_MIN(caps.max_qp, kMaxRxQueues); }
uint32_t max_tx_queues(const DeviceCaps& caps) {
  return RTE_MIN(caps.max_qp, uint32_t{UINT16_MAX});
}

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
  priv->reta_queues = 0;  // the default table again
  return mtu_apply(dev);
}

int dev_infos_get(rte_eth_dev* dev, rte_eth_dev_info* info) {
  const PortPriv* priv = priv_of(dev);
  const DeviceCaps& caps = priv->caps;
  info->max_rx_queues = static_cast<uint16_t>(max_rx_queues(caps));
  info->max_tx_queues = static_cast<uint16_t>(max_tx_queues(caps));
  info->min_rx_bufsize = kMinRxBufSize;
  info->max_rx_pktlen = rx_frame_len(priv->max_mtu);
  info->min_mtu = RTE_ETHER_MIN_MTU;
  info->max_mtu = static_cast<uint16_t>(priv->max_mtu);
  info->max_mac_addrs = 1;
  info->rx_offload_capa = kRxOffloads;
  info->tx_offload_capa = kTxOffloads;
  info->rx_queue_offload_capa = 0;
  info->tx_queue_offload_capa = 0;
  info->reta_size = hw::kRssTableSize;
  info->hash_key_size = hw::kRssKeySize;
  info->flow_type_rss_offloads = kSupportedRssHf;
  info->speed_capa = RTE_ETH_LINK_SPEED_100G;
  // A removed VF is recovered by the driver itself (recovery.h).
  info->err_handle_mode = RTE_ETH_ERROR_HANDLE_MODE_PROACTIVE;

  const uint32_t max_desc = max_desc_of(caps);
  rte_eth_desc_lim lim{};
  lim.nb_max = static_cast<uint16_t>(max_desc);
  lim.nb_min = kMinDesc;
  lim.nb_align = kDescAlign;
  lim.nb_seg_max = static_cast<uint16_t>(caps.max_sge);
  lim.nb_mtu_seg_max = static_cast<uint16_t>(caps.max_sge);
  info->rx_desc_lim = lim;
  // A TSO packet may need one SGE more than it has segments: the headers go alone in SGE 0
  // (doc/hardware.md §4.11).
  const uint16_t tx_sge = static_cast<uint16_t>(RTE_MIN(caps.max_sge, hw::kMaxTxSge));
  lim.nb_seg_max = static_cast<uint16_t>(tx_sge - 1);
  lim.nb_mtu_seg_max = tx_sge;
  info->tx_desc_lim = lim;

  info->default_rxconf.rx_drop_en = 1;
  info->default_rxconf.rx_free_thresh = kDefaultBurst;
  info->default_txconf.tx_rs_thresh = kDefaultTxRsThresh;
  info->default_txconf.tx_free_thresh = kDefaultTxFreeThresh;
  const uint16_t ring = static_cast<uint16_t>(RTE_MIN(kDefaultDesc, max_desc));
  for (rte_eth_dev_portconf* pc : {&info->default_rxportconf, &info->default_txportconf}) {
    pc->burst_size = kDefaultBurst;
    pc->ring_size = ring;
    pc->nb_queues = 1;
  }
  return 0;
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

// The control operations that need the VF: refused (one line) while it is removed.
bool vf_is_here(const PortPriv& priv, const char* what) {
  const Recovery r = recovery_state(priv);
  if (r == Recovery::kNone) return true;
  // Under an owner the port is the owner's to close or keep: say what it does, not what an
  // application would do.
  char note[kOwnerNoteLen];
  if (owner_removal_note(priv.port_id, note, sizeof(note))[0] != '\0')
    MANA_DRV_LOG(ERR, "port %u: cannot %s: the VF is removed%s", priv.port_id, what, note);
  else if (r == Recovery::kFailed)
    MANA_DRV_LOG(ERR,
                 "port %u: cannot %s: the VF was removed and did not come back: close the port, "
                 "or reset it (rte_eth_dev_reset) once the VF is back",
                 priv.port_id, what);
  else
    MANA_DRV_LOG(ERR,
                 "port %u: cannot %s: the VF is removed; the port recovers by itself when it is "
                 "back (RTE_ETH_EVENT_RECOVERY_SUCCESS): %s then",
                 priv.port_id, what, what);
  return false;
}

// Queue setup registers memory in the PD, which is gone with a removed VF.
int rx_queue_setup_op(rte_eth_dev* dev, uint16_t idx, uint16_t nb_desc, unsigned socket,
                      const rte_eth_rxconf* conf, rte_mempool* mp) {
  if (!vf_is_here(*priv_of(dev), "set up an RX queue")) return -EIO;
  return rx_queue_setup(dev, idx, nb_desc, socket, conf, mp);
}

int tx_queue_setup_op(rte_eth_dev* dev, uint16_t idx, uint16_t nb_desc, unsigned socket,
                      const rte_eth_txconf* conf) {
  if (!vf_is_here(*priv_of(dev), "set up a TX queue")) return -EIO;
  return tx_queue_setup(dev, idx, nb_desc, socket, conf);
}

// A start that the VF's removal overtook (before it or inside it), on a port another driver owns:
// the owner was told (RTE_ETH_EVENT_INTR_RMV) and closes the port, and its own start must not
// fail for it: DPDK's netvsc PMD would be left stopped, deaf to the VF's hot-add (doc/guide.md
// "Servicing, case by case"). The port counts as started with its bursts returning 0; the
// recovery starts its queues if the owner keeps it. `rc` otherwise.
int start_overtaken_by_removal(rte_eth_dev* dev, int rc) {
  PortPriv* priv = priv_of(dev);
  char note[kOwnerNoteLen];
  if (recovery_state(*priv) == Recovery::kNone ||
      owner_removal_note(priv->port_id, note, sizeof(note))[0] == '\0')
    return rc;
  set_start_queue_states(dev);
  priv->started = true;
  link_watch_start(dev);  // the link comes up with the VF
  MANA_DRV_LOG(NOTICE, "port %u: started while the VF is removed: bursts return 0%s", priv->port_id,
               note);
  return 0;
}

int start_locked(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  if (!all_queues_set_up(dev)) return -EINVAL;
  if (start_overtaken_by_removal(dev, -EIO) == 0) return 0;
  if (!vf_is_here(*priv, "start the port")) return -EIO;
  mtu_warn_short_buffers(dev);
  if (int rc = port_queues_create(dev); rc != 0) return start_overtaken_by_removal(dev, rc);
  static_cast<ProcessPrivate*>(dev->process_private)->db_page = priv->db_page;
  set_start_queue_states(dev);
  open_port_gates(dev);
  const RxSimd simd = rx_simd_best();
  dev->rx_pkt_burst = select_rx_burst(dev->data->dev_conf.rxmode.offloads, simd);
  MANA_INIT_LOG(INFO, "port %u: RX burst %s", dev->data->port_id, rx_simd_name(simd));
  dev->tx_pkt_burst = select_port_tx_burst(dev);
  priv->started = true;
  mp_notify_secondaries_start(dev);
  link_update(dev, 0);
  tx_watchdog_start(dev);
  link_watch_start(dev);
  return 0;
}

// Recovery from a VF removal waits while the application starts, stops or closes (recovery.h).
int dev_start(rte_eth_dev* dev) {
  recovery_control_begin(dev);
  const int rc = start_locked(dev);
  recovery_control_end(dev);
  return rc;
}

// Also while the VF is removed: the queues' objects were destroyed by the recovery, or are
// destroyed here (uverbs answers for the removed device).
int stop_locked(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  link_watch_stop(dev);
  tx_watchdog_stop(dev);  // first: a reset it is doing finishes before the queues go
  // No burst of any process may be inside a queue once its objects go (queue_gate.h).
  close_port_gates(dev);
  dev->rx_pkt_burst = rx_burst_stopped;
  dev->tx_pkt_burst = tx_burst_stopped;
  mp_notify_secondaries_stop(dev);
  port_queues_destroy(dev);
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++)
    dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++)
    dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
  priv->started = false;
  link_update(dev, 0);  // down: a stopped port passes nothing
  return 0;
}

int dev_stop(rte_eth_dev* dev) {
  recovery_control_begin(dev);
  const int rc = stop_locked(dev);
  recovery_control_end(dev);
  return rc;
}

int dev_close(rte_eth_dev* dev) {
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
    mp_detach_secondary(dev);
    rte_free(dev->process_private);
    dev->process_private = nullptr;
    return 0;
  }
  PortPriv* priv = priv_of(dev);
  recovery_control_begin(dev);
  if (priv->started) stop_locked(dev);
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++) rx_queue_release(dev, i);
  for (uint16_t i = 0; i < dev->data->nb_tx_queues; i++) tx_queue_release(dev, i);
  mr_events_unsubscribe(&static_cast<ProcessPrivate*>(dev->process_private)->mr_events);
  free_kept_queues(*priv);
  mr_port_cache_release(priv->mr, verbs_registrar(priv->pd));
  intr_uninstall(*priv);  // before the context it watches closes
  close_port_verbs(*priv);
  recovery_cancel(dev);  // a fatal event may have armed it until the handler went
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
  o.dev_reset = dev_reset;
  o.link_update = link_update;
  o.stats_get = compat::stats_get_op<stats_get>();
  o.stats_reset = stats_reset;
  o.xstats_get = xstats_get;
  o.xstats_reset = xstats_reset;
  o.xstats_get_names = xstats_get_names;
  o.dev_infos_get = dev_infos_get;
  o.dev_supported_ptypes_get = compat::supported_ptypes_op<rx_supported_ptypes>();
  o.rx_queue_setup = rx_queue_setup_op;
  o.rx_queue_release = rx_queue_release;
  o.rx_queue_intr_enable = rx_queue_intr_enable;
  o.rx_queue_intr_disable = rx_queue_intr_disable;
  o.tx_queue_setup = tx_queue_setup_op;
  o.tx_queue_release = tx_queue_release;
  o.tx_done_cleanup = tx_done_cleanup;
  o.rx_queue_start = rx_queue_start_op;
  o.rx_queue_stop = rx_queue_stop_op;
  o.tx_queue_start = tx_queue_start_op;
  o.tx_queue_stop = tx_queue_stop_op;
  o.rxq_info_get = rxq_info_get;
  o.txq_info_get = txq_info_get;
  o.rx_burst_mode_get = rx_burst_mode_get;
  o.tx_burst_mode_get = tx_burst_mode_get;
  o.mtu_set = mtu_set;
  o.reta_update = reta_update;
  o.reta_query = reta_query;
  o.rss_hash_update = rss_hash_update;
  o.rss_hash_conf_get = rss_hash_conf_get;
  o.allmulticast_enable = allmulticast_enable;
  o.allmulticast_disable = allmulticast_disable;
  o.vlan_offload_set = vlan_offload_set;
  return o;
}();

// A secondary process reads state but does not change the device.
const eth_dev_ops kSecondaryOps = [] {
  eth_dev_ops o{};
  o.dev_close = dev_close;
  o.tx_done_cleanup = tx_done_cleanup;  // a secondary sending on its own queues reclaims them
  o.stats_get = compat::stats_get_op<stats_get>();
  o.xstats_get = xstats_get;
  o.xstats_get_names = xstats_get_names;
  o.dev_infos_get = dev_infos_get;
  o.link_update = link_update;
  o.dev_supported_ptypes_get = compat::supported_ptypes_op<rx_supported_ptypes>();
  o.reta_query = reta_query;
  o.rss_hash_conf_get = rss_hash_conf_get;
  o.rxq_info_get = rxq_info_get;
  o.txq_info_get = txq_info_get;
  o.rx_burst_mode_get = rx_burst_mode_get;
  o.tx_burst_mode_get = tx_burst_mode_get;
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
