// SPDX-License-Identifier: BSD-3-Clause
#include "rss.h"

#include <cerrno>
#include <cstring>

#include <infiniband/verbs.h>

#include "mana_log.h"
#include "priv.h"

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

int rss_hash_update(rte_eth_dev* dev, rte_eth_rss_conf* conf) {
  PortPriv* priv = priv_of(dev);
  if (dev->data->dev_started) {
    MANA_DRV_LOG(ERR, "port %u: RSS can only be changed while the port is stopped", priv->port_id);
    return -EBUSY;
  }
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
  if (conf->rss_key != nullptr) std::memcpy(priv->rss_key, conf->rss_key, hw::kRssKeySize);
  priv->rss_hf = conf->rss_hf;
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

// The kernel programs entry i with the WQ of index i mod table size (doc/hardware.md §2.5).
int reta_query(rte_eth_dev* dev, rte_eth_rss_reta_entry64* conf, uint16_t size) {
  if (size != hw::kRssTableSize) {
    MANA_DRV_LOG(ERR, "port %u: the RSS table has %u entries, not %u", dev->data->port_id,
                 hw::kRssTableSize, size);
    return -EINVAL;
  }
  const uint16_t nb_rxq = dev->data->nb_rx_queues;
  if (nb_rxq == 0) return -EINVAL;
  for (uint16_t i = 0; i < size; i++) {
    rte_eth_rss_reta_entry64& group = conf[i / RTE_ETH_RETA_GROUP_SIZE];
    const unsigned bit = i % RTE_ETH_RETA_GROUP_SIZE;
    if (group.mask & (1ULL << bit)) group.reta[bit] = static_cast<uint16_t>(i & (nb_rxq - 1));
  }
  return 0;
}

}  // namespace mana
