// SPDX-License-Identifier: BSD-3-Clause
#include "queue_info.h"

#include <cstdio>

#include "burst.h"
#include "priv.h"

namespace mana {
namespace {

// The implementation (e.g. "Scalar", "Vector SSE4.1") plus the features compiled into the
// variant, e.g. "Scalar, checksum, RSS hash".
void name_variant(rte_eth_burst_mode* mode, const char* kind,
                  std::initializer_list<std::pair<bool, const char*>> f) {
  int n = snprintf(mode->info, sizeof(mode->info), "%s", kind);
  for (const auto& [on, what] : f)
    if (on && n >= 0 && static_cast<size_t>(n) < sizeof(mode->info))
      n += snprintf(mode->info + n, sizeof(mode->info) - n, ", %s", what);
}

}  // namespace

void rxq_info_get(rte_eth_dev* dev, uint16_t idx, rte_eth_rxq_info* info) {
  const auto& q = *rxq_of(dev, idx);
  info->mp = q.mp;
  info->nb_desc = static_cast<uint16_t>(q.nb_desc);
  info->rx_buf_size = static_cast<uint16_t>(q.buf_len);
  info->scattered_rx = 0;
  info->conf.rx_free_thresh = q.free_thresh;
  info->conf.rx_drop_en = 1;
  info->conf.rx_deferred_start = q.deferred_start;
  info->conf.offloads = dev->data->dev_conf.rxmode.offloads;
}

void txq_info_get(rte_eth_dev* dev, uint16_t idx, rte_eth_txq_info* info) {
  const auto& q = *txq_of(dev, idx);
  info->nb_desc = static_cast<uint16_t>(q.nb_desc);
  info->conf.tx_rs_thresh = q.rs_thresh;
  info->conf.tx_free_thresh = q.free_thresh;
  info->conf.tx_deferred_start = q.deferred_start;
  info->conf.offloads = dev->data->dev_conf.txmode.offloads;
}

// The variant select_rx_burst takes for the port's offloads (the same for every queue): the
// implementation the port runs, or while it is stopped the one it would start with.
int rx_burst_mode_get(rte_eth_dev* dev, uint16_t, rte_eth_burst_mode* mode) {
  const uint64_t o = dev->data->dev_conf.rxmode.offloads;
  RxSimd simd = rx_simd_best();
  for (RxSimd s : kRxSimdAll)
    if (rx_simd_supported(s) && dev->rx_pkt_burst == select_rx_burst(o, s)) simd = s;
  mode->flags = 0;
  name_variant(mode, rx_simd_name(simd),
               {{(o & RTE_ETH_RX_OFFLOAD_CHECKSUM) != 0, "checksum"},
                {(o & RTE_ETH_RX_OFFLOAD_RSS_HASH) != 0, "RSS hash"},
                {(o & RTE_ETH_RX_OFFLOAD_VLAN_STRIP) != 0, "VLAN strip"}});
  return 0;
}

// The variant select_port_tx_burst takes: offloads, and the long OOB when a queue needs it.
int tx_burst_mode_get(rte_eth_dev* dev, uint16_t, rte_eth_burst_mode* mode) {
  const uint64_t o = dev->data->dev_conf.txmode.offloads;
  const bool long_oob = select_tx_burst(o, true) != select_tx_burst(o, false) &&
                        select_port_tx_burst(dev) == select_tx_burst(o, true);
  mode->flags = 0;
  name_variant(mode, "Scalar",
               {{(o & kTxCsumOffloads) != 0, "checksum"},
                {(o & kTxMultiSegOffloads) != 0, "multi-segment"},
                {(o & RTE_ETH_TX_OFFLOAD_TCP_TSO) != 0, "TSO"},
                {(o & RTE_ETH_TX_OFFLOAD_VLAN_INSERT) != 0, "VLAN insert"},
                {long_oob, "long OOB"}});
  return 0;
}

}  // namespace mana
