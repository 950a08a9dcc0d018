// SPDX-License-Identifier: BSD-3-Clause
#include "rss.h"

#include <cerrno>
#include <cstring>

#include "mana_log.h"
#include "priv.h"
#include "queue_control.h"
#include "rx_queue.h"

namespace mana {

int rss_hash_update(rte_eth_dev* dev, rte_eth_rss_conf* conf) {
  PortPriv* priv = priv_of(dev);
  if (conf->rss_hf & ~kSupportedRssHf) {
    MANA_DRV_LOG(ERR,
                 "port %u: RSS hash types %#" PRIx64 " not supported (supported: %#" PRIx64 ")",
                 priv->port_id, conf->rss_hf & ~kSupportedRssHf, kSupportedRssHf);
    return -EINVAL;
  }
  if (conf->rss_key != nullptr && conf->rss_key_len != hw::kRssKeySize) {
    MANA_DRV_LOG(ERR, "port %u: RSS key must be %u bytes, not %u", priv->port_id, hw::kRssKeySize,
                 conf->rss_key_len);
    return -EINVAL;
  }
  uint8_t old_key[hw::kRssKeySize];
  std::memcpy(old_key, priv->rss_key, sizeof(old_key));
  const uint64_t old_hf = priv->rss_hf;
  if (conf->rss_key != nullptr) std::memcpy(priv->rss_key, conf->rss_key, hw::kRssKeySize);
  priv->rss_hf = conf->rss_hf;
  if (dev->data->dev_started && dev->data->nb_rx_queues != 0) {
    if (int rc = rx_rebuild(dev, "change the RSS key or hash types"); rc != 0) {
      std::memcpy(priv->rss_key, old_key, sizeof(old_key));
      priv->rss_hf = old_hf;
      if (rc == -ENOTSUP) return rc;
      rx_rebuild(dev, "restore the RSS configuration");
      return rc;
    }
  }
  dev->data->dev_conf.rx_adv_conf.rss_conf.rss_hf = conf->rss_hf;
  return 0;
}

int rss_hash_conf_get(rte_eth_dev* dev, rte_eth_rss_conf* conf) {
  const PortPriv* priv = priv_of(dev);
  if (conf->rss_key != nullptr) {
    if (conf->rss_key_len < hw::kRssKeySize) return -EINVAL;
    std::memcpy(conf->rss_key, priv->rss_key, hw::kRssKeySize);
  }
  conf->rss_key_len = hw::kRssKeySize;
  conf->rss_hf = priv->rss_hf;
  return 0;
}

namespace {

// The NIC's table repeats every nb_rx_queues entries (doc/hardware.md §2.5), so a table of any of
// DPDK's sizes (64 to 512, a power of two) describes it exactly: entry i is position
// i mod nb_rx_queues. net_netvsc passes its own 128-entry table to its VF (doc/guide.md, "Under
// DPDK's netvsc PMD").
bool check_reta_size(const rte_eth_dev* dev, uint16_t size) {
  const bool table_size_ok = size >= RTE_ETH_RETA_GROUP_SIZE && size <= RTE_ETH_RSS_RETA_SIZE_512 &&
                             (size & (size - 1)) == 0;
  if (table_size_ok && dev->data->nb_rx_queues != 0) return true;
  if (!table_size_ok)
    MANA_DRV_LOG(ERR,
                 "port %u: an RSS table of %u entries: give 64, 128, 256 or 512 (the NIC's "
                 "table repeats every nb_rx_queues entries)",
                 dev->data->port_id, size);
  else
    MANA_DRV_LOG(ERR, "port %u: the RSS table needs RX queues: configure the port first",
                 dev->data->port_id);
  return false;
}

bool entry_set(const rte_eth_rss_reta_entry64* conf, unsigned i) {
  return conf[i / RTE_ETH_RETA_GROUP_SIZE].mask & (1ULL << (i % RTE_ETH_RETA_GROUP_SIZE));
}
uint16_t entry_queue(const rte_eth_rss_reta_entry64* conf, unsigned i) {
  return conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
}

// The WQ order the update asks for, from the current one; false (logged) when the NIC cannot have
// it.
bool reta_order_for(const rte_eth_dev* dev, const rte_eth_rss_reta_entry64* conf, uint16_t size,
                    uint16_t* order) {
  const PortPriv& priv = *priv_of(dev);
  const uint16_t n = dev->data->nb_rx_queues;
  for (uint16_t p = 0; p < n; p++) order[p] = rss_table_queue(priv, n, p);
  bool set[kMaxRxQueues] = {};
  for (unsigned i = 0; i < size; i++) {
    if (!entry_set(conf, i)) continue;
    const uint16_t q = entry_queue(conf, i);
    const unsigned p = i & (n - 1u);
    if (q >= n || (set[p] && order[p] != q)) {
      MANA_DRV_LOG(ERR,
                   "port %u: RETA entry %u -> queue %u: the NIC's table repeats every %u entries "
                   "(entries %u, %u, ... share one queue) and names existing queues only",
                   priv.port_id, i, q, n, p, p + n);
      return false;
    }
    order[p] = q;
    set[p] = true;
  }
  bool used[kMaxRxQueues] = {};
  for (uint16_t p = 0; p < n; p++) {
    if (used[order[p]]) {
      MANA_DRV_LOG(ERR,
                   "port %u: RETA: queue %u would take two of the table's %u positions; the NIC "
                   "lists each RX queue once (doc/guide.md \"Queues at run time\")",
                   priv.port_id, order[p], n);
      return false;
    }
    used[order[p]] = true;
  }
  return true;
}

}  // namespace

// The kernel programs entry i with the WQ at position i mod the table size (doc/hardware.md §2.5).
int reta_query(rte_eth_dev* dev, rte_eth_rss_reta_entry64* conf, uint16_t size) {
  if (!check_reta_size(dev, size)) return -EINVAL;
  const uint16_t n = dev->data->nb_rx_queues;
  const PortPriv& priv = *priv_of(dev);
  for (uint16_t i = 0; i < size; i++)
    if (entry_set(conf, i))
      conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
          rss_table_queue(priv, n, static_cast<uint16_t>(i & (n - 1)));
  return 0;
}

int reta_update(rte_eth_dev* dev, rte_eth_rss_reta_entry64* conf, uint16_t size) {
  if (!check_reta_size(dev, size)) return -EINVAL;
  PortPriv& priv = *priv_of(dev);
  const uint16_t n = dev->data->nb_rx_queues;
  uint16_t order[kMaxRxQueues];
  if (!reta_order_for(dev, conf, size, order)) return -ENOTSUP;
  uint16_t old[kMaxRxQueues];
  for (uint16_t p = 0; p < n; p++) old[p] = rss_table_queue(priv, n, p);
  std::memcpy(priv.reta, order, n * sizeof(order[0]));
  priv.reta_queues = n;
  if (!dev->data->dev_started) return 0;
  const int rc = rx_rebuild(dev, "change the RSS table");
  if (rc != 0) {
    std::memcpy(priv.reta, old, n * sizeof(old[0]));
    if (rc != -ENOTSUP) rx_rebuild(dev, "restore the RSS table");
  }
  return rc;
}

}  // namespace mana
