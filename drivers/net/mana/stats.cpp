// SPDX-License-Identifier: BSD-3-Clause
#include "stats.h"

#include <cstddef>
#include <cstring>

#include <ethdev_driver.h>

#include "hw_counters.h"
#include "priv.h"

namespace mana {
namespace {

struct Counter {
  const char* name;
  size_t offset;
};

constexpr Counter kRxQueueCounters[] = {
    {"packets", offsetof(RxQueueStats, packets)},
    {"bytes", offsetof(RxQueueStats, bytes)},
    {"errors", offsetof(RxQueueStats, errors)},
    {"mbuf_allocation_errors", offsetof(RxQueueStats, nombuf)},
    {"zero_length_cqes", offsetof(RxQueueStats, zero_length_cqes)},
    {"oversize_packets", offsetof(RxQueueStats, oversize_packets)},
    {"cq_overflows", offsetof(RxQueueStats, cq_overflows)},
    {"misdirected_cqes", offsetof(RxQueueStats, misdirected_cqes)},
};
constexpr Counter kTxQueueCounters[] = {
    {"packets", offsetof(TxQueueStats, packets)},
    {"bytes", offsetof(TxQueueStats, bytes)},
    {"errors", offsetof(TxQueueStats, errors)},
    {"ring_full", offsetof(TxQueueStats, ring_full)},
    {"too_many_segs", offsetof(TxQueueStats, too_many_segs)},
    {"mr_lookup_failures", offsetof(TxQueueStats, mr_miss)},
    {"checksum_headers_split", offsetof(TxQueueStats, csum_headers_split)},
    {"checksum_readonly_mbuf", offsetof(TxQueueStats, csum_readonly)},
    {"tso_invalid_requests", offsetof(TxQueueStats, tso_invalid)},
    {"misdirected_cqes", offsetof(TxQueueStats, misdirected_cqes)},
#define MANA_PREPARE_REFUSED(name, reason) \
  { "prepare_refused_" name, offsetof(TxQueueStats, prepare_refused) + sizeof(uint64_t) * (reason) }
    MANA_PREPARE_REFUSED("unsupported", kPrepareUnsupported),
    MANA_PREPARE_REFUSED("bad_request", kPrepareBadRequest),
    MANA_PREPARE_REFUSED("too_many_segs", kPrepareTooManySegs),
    MANA_PREPARE_REFUSED("tso_beyond_wqe", kPrepareTsoBeyondWqe),
    MANA_PREPARE_REFUSED("tso_frame_above_mtu", kPrepareTsoAboveMtu),
    MANA_PREPARE_REFUSED("frame_above_mtu", kPrepareFrameAboveMtu),
#undef MANA_PREPARE_REFUSED
};
static_assert(RTE_DIM(kTxQueueCounters) == 10 + kTxPrepareRefusalKinds - 1,
              "one xstat per tx_prepare refusal reason");
constexpr const char* kRxCqeNames[kRxCqeErrorKinds] = {"invalid", "object_fence", "truncated",
                                                       "unknown"};
constexpr const char* kTxCqeNames[kTxCqeErrorKinds] = {"sa_drop",
                                                       "mtu_drop",
                                                       "invalid_oob",
                                                       "invalid_eth_type",
                                                       "hdr_processing_error",
                                                       "vf_disabled",
                                                       "vport_idx_out_of_range",
                                                       "vport_disabled",
                                                       "vlan_tagging_violation",
                                                       "unknown"};

uint64_t at(const void* stats, size_t offset) {
  uint64_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(stats) + offset, sizeof(v));
  return v;
}

// The port's own xstats at the end: hc_rx_discards_no_wqe, tx_stall_resets.
constexpr unsigned kPortXstats = 2;

unsigned xstats_count(const rte_eth_dev* dev) {
  return dev->data->nb_rx_queues * RTE_DIM(kRxQueueCounters) + kRxCqeErrorKinds +
         dev->data->nb_tx_queues * RTE_DIM(kTxQueueCounters) + kTxCqeErrorKinds + kPortXstats;
}

// Calls emit(name-format pieces, value) for every xstat in order.
template <class Emit>
void for_each_xstat(const rte_eth_dev* dev, Emit emit) {
  static const RxQueueStats kZeroRx{};
  static const TxQueueStats kZeroTx{};
  char name[RTE_ETH_XSTATS_NAME_SIZE];
  for (unsigned i = 0; i < dev->data->nb_rx_queues; i++) {
    const RxQueueStats& s = rxq_of(dev, i) ? rxq_of(dev, i)->stats : kZeroRx;
    for (const Counter& c : kRxQueueCounters) {
      snprintf(name, sizeof(name), "rx_q%u_%s", i, c.name);
      emit(name, at(&s, c.offset));
    }
  }
  for (unsigned k = 0; k < kRxCqeErrorKinds; k++) {
    uint64_t sum = 0;
    for (unsigned i = 0; i < dev->data->nb_rx_queues; i++)
      if (rxq_of(dev, i)) sum += rxq_of(dev, i)->stats.cqe_errors[k];
    snprintf(name, sizeof(name), "rx_cqe_%s_errors", kRxCqeNames[k]);
    emit(name, sum);
  }
  for (unsigned i = 0; i < dev->data->nb_tx_queues; i++) {
    const TxQueueStats& s = txq_of(dev, i) ? txq_of(dev, i)->stats : kZeroTx;
    for (const Counter& c : kTxQueueCounters) {
      snprintf(name, sizeof(name), "tx_q%u_%s", i, c.name);
      emit(name, at(&s, c.offset));
    }
  }
  for (unsigned k = 0; k < kTxCqeErrorKinds; k++) {
    uint64_t sum = 0;
    for (unsigned i = 0; i < dev->data->nb_tx_queues; i++)
      if (txq_of(dev, i)) sum += txq_of(dev, i)->stats.cqe_errors[k];
    snprintf(name, sizeof(name), "tx_cqe_%s_errors", kTxCqeNames[k]);
    emit(name, sum);
  }
  // The kernel's name for the NIC's counter (doc/hardware.md §2.11); the same value as imissed.
  emit("hc_rx_discards_no_wqe", hw_rx_missed(*static_cast<PortPriv*>(dev->data->dev_private)));
  // Queue resets of the TX stall watchdog (tx_watchdog.h).
  emit("tx_stall_resets", __atomic_load_n(&priv_of(dev)->tx_stall_resets, __ATOMIC_RELAXED));
}

}  // namespace

int stats_get(rte_eth_dev* dev, rte_eth_stats* st, compat::QueueStats* qs) {
  uint64_t nombuf = 0;
  for (unsigned i = 0; i < dev->data->nb_rx_queues; i++) {
    const RxQueue* q = rxq_of(dev, i);
    if (q == nullptr) continue;
    st->ipackets += q->stats.packets;
    st->ibytes += q->stats.bytes;
    st->ierrors += q->stats.errors;
    nombuf += q->stats.nombuf;
    if (qs != nullptr && i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
      qs->q_ipackets[i] = q->stats.packets;
      qs->q_ibytes[i] = q->stats.bytes;
      qs->q_errors[i] = q->stats.errors;
    }
  }
  st->rx_nombuf = nombuf;
  st->imissed = hw_rx_missed(*static_cast<PortPriv*>(dev->data->dev_private));
  for (unsigned i = 0; i < dev->data->nb_tx_queues; i++) {
    const TxQueue* q = txq_of(dev, i);
    if (q == nullptr) continue;
    st->opackets += q->stats.packets;
    st->obytes += q->stats.bytes;
    st->oerrors += q->stats.errors;
    if (qs != nullptr && i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
      qs->q_opackets[i] = q->stats.packets;
      qs->q_obytes[i] = q->stats.bytes;
    }
  }
  return 0;
}

int stats_reset(rte_eth_dev* dev) {
  hw_counters_reset(*static_cast<PortPriv*>(dev->data->dev_private));
  __atomic_store_n(&priv_of(dev)->tx_stall_resets, 0, __ATOMIC_RELAXED);
  for (unsigned i = 0; i < dev->data->nb_rx_queues; i++)
    if (auto* q = rxq_of(dev, i)) q->stats = RxQueueStats{};
  for (unsigned i = 0; i < dev->data->nb_tx_queues; i++)
    if (auto* q = txq_of(dev, i)) q->stats = TxQueueStats{};
  return 0;
}

int xstats_get(rte_eth_dev* dev, rte_eth_xstat* xstats, unsigned n) {
  const unsigned count = xstats_count(dev);
  if (xstats == nullptr || n < count) return static_cast<int>(count);
  unsigned i = 0;
  for_each_xstat(dev, [&](const char*, uint64_t v) {
    xstats[i].id = i;
    xstats[i].value = v;
    i++;
  });
  return static_cast<int>(count);
}

int xstats_get_names(rte_eth_dev* dev, rte_eth_xstat_name* names, unsigned size) {
  const unsigned count = xstats_count(dev);
  if (names == nullptr || size < count) return static_cast<int>(count);
  unsigned i = 0;
  for_each_xstat(dev, [&](const char* name, uint64_t) {
    snprintf(names[i].name, sizeof(names[i].name), "%s", name);
    i++;
  });
  return static_cast<int>(count);
}

int xstats_reset(rte_eth_dev* dev) { return stats_reset(dev); }

}  // namespace mana
