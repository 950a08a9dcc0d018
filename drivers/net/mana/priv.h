// SPDX-License-Identifier: BSD-3-Clause
// The driver's state: per port (ethdev dev_private) and per queue. All of it lives in DPDK memory
// so that secondary processes see it at the same address; data-path fields come first in each
// queue.
#pragma once

#include <net/if.h>

#include <cstddef>
#include <cstdint>

#include <ethdev_driver.h>
#include <rte_ethdev.h>
#include <rte_ether.h>

#include "gdma.h"
#include "mana/gdma_format.h"
#include "mr_cache.h"
#include "queue_gate.h"
#include "tx_oob.h"

struct ibv_context;
struct ibv_pd;
struct ibv_cq;
struct ibv_qp;
struct ibv_wq;
struct ibv_comp_channel;
struct ibv_rwq_ind_table;
struct rte_intr_handle;

namespace mana {

inline constexpr uint32_t kMinDesc = 64;
inline constexpr uint32_t kDescAlign = 64;
inline constexpr uint32_t kDefaultDesc = 256;
inline constexpr uint32_t kMaxRxQueues = hw::kRssTableSize;
inline constexpr uint32_t kMinRxBufSize = 1024;
// The largest frame of an MTU (max_rx_pktlen - max_mtu, as DPDK-main's net_mana counts it): the
// header only, as the NIC strips the CRC and any VLAN tag (doc/hardware.md §2.9, §9.13). Every RX
// buffer must hold it, there is no scattered RX (§4.4).
inline constexpr uint32_t kFrameOverhead = RTE_ETHER_HDR_LEN;
inline constexpr uint32_t rx_frame_len(uint32_t mtu) { return mtu + kFrameOverhead; }
// The mempool data room (rte_pktmbuf_data_room_size, testpmd's --mbuf-size) an MTU needs: its
// largest frame after the headroom. Queue setup and mtu_set both state sizes in it.
inline constexpr uint32_t rx_data_room_for(uint32_t mtu) {
  return RTE_PKTMBUF_HEADROOM + RTE_MAX(kMinRxBufSize, rx_frame_len(mtu));
}

// Limits from ibv_query_device_ex at probe.
struct DeviceCaps {
  uint32_t max_qp = 0;
  uint32_t max_qp_wr = 0;
  uint32_t max_cqe = 0;
  uint32_t max_sge = 0;
  uint32_t max_mr = 0;
  uint64_t max_mr_size = 0;
  uint32_t provider_max_wr = 0;  // libmana's own WR/CQE limit (queue_create.h), 0: none
};

// Error completions counted per type (xstats); the last slot takes types we do not know.
inline constexpr unsigned kRxCqeErrorKinds = 4;   // invalid, object fence, truncated, other
inline constexpr unsigned kTxCqeErrorKinds = 10;  // types 33..41, other
// Why rte_eth_tx_prepare refused a packet (doc/guide.md "Features", TX prepare), one xstat each.
enum TxPrepareRefusal : uint8_t {
  kPrepareOk = 0,
  kPrepareUnsupported,    // ENOTSUP: an offload the port or the NIC does not do
  kPrepareBadRequest,     // EINVAL: flags and lengths that do not agree, headers split
  kPrepareTooManySegs,    // EINVAL: more segments than the queue sends
  kPrepareTsoBeyondWqe,   // EINVAL: TSO headers, MSS or size beyond what a WQE carries
  kPrepareTsoAboveMtu,    // EINVAL: a TSO frame (headers + MSS) above the MTU
  kPrepareFrameAboveMtu,  // EINVAL: a frame above MTU + 14 (+ 4 with a VLAN tag)
  kTxPrepareRefusalKinds,
};

// What the TX stall watchdog (tx_watchdog.h) saw of one queue at its last look (control path
// only).
struct TxStallWatch {
  uint32_t tail;        // desc_tail
  uint64_t ring_full;   // stats.ring_full
  uint64_t tail_since;  // rte_get_timer_cycles() when the tail last moved (or the queue went idle)
};

struct RxQueueStats {
  uint64_t packets;
  uint64_t bytes;
  uint64_t errors;            // error completions (packets dropped by the NIC)
  uint64_t nombuf;            // packets dropped because no replacement mbuf could be allocated
  uint64_t zero_length_cqes;  // okay CQEs whose first packet has length 0: consumed no WQE
  uint64_t oversize_packets;  // reported longer than the buffer: dropped, counted in errors too
  uint64_t cq_overflows;      // polls that found the CQ overflowed (the NIC lapped the consumer)
  uint64_t misdirected_cqes;  // CQEs naming another queue (wq_num, is_sq): skipped
  uint64_t cqe_errors[kRxCqeErrorKinds];
};

struct TxQueueStats {
  uint64_t packets;  // posted to the NIC
  uint64_t bytes;
  uint64_t errors;              // error completions
  uint64_t ring_full;           // bursts cut short because the SQ was full
  uint64_t too_many_segs;       // packets refused: more segments than the NIC takes
  uint64_t mr_miss;             // packets refused: no memory registration covers a segment
  uint64_t csum_headers_split;  // packets refused: L4 checksum field not in the first segment
  uint64_t csum_readonly;       // packets refused: seed needed but the mbuf data is shared
  uint64_t tso_invalid;       // TSO packets refused: headers, MSS or size beyond what a WQE carries
  uint64_t misdirected_cqes;  // CQEs naming another queue (wq_num, is_sq, client_type): skipped
  uint64_t prepare_refused[kTxPrepareRefusalKinds];  // by tx_prepare, per reason ([0] unused)
  uint64_t cqe_errors[kTxCqeErrorKinds];
};

struct PortPriv;

// The mbuf metadata decoded from the last CQE flags word (rx_burst.cpp): consecutive packets
// nearly always share it, so it is kept across bursts.
struct RxMeta {
  uint64_t ol_flags;
  uint32_t dw1;
  uint32_t ptype;
  uint16_t vlan_tci;  // 0 without a tag
  bool l3_from_frame;
  bool tag_back;    // the burst puts the stripped VLAN tag back in the frame
  uint8_t variant;  // the burst variant that decoded it; 0: nothing decoded yet
};

// The hot fields are laid out for 64-byte cache lines, those of x86-64 and of Azure's Arm CPUs
// (Neoverse N2 in Cobalt 100). DPDK's generic arm64 build says 128 (RTE_CACHE_LINE_SIZE, which
// still aligns each queue): the layout does not follow it.
inline constexpr size_t kHotLine = 64;

// Hot fields first: the burst reads cache line 0 on every call and line 1 when it refills or meets
// a rare completion; stats and the control path follow (static_asserts below the struct).
struct alignas(RTE_CACHE_LINE_SIZE) RxQueue {
  // Cache line 0: every burst.
  QueueGate gate;
  CompletionQueue cq;
  rte_mbuf** mbufs;  // one per RQ WQE, slot = WQE index & desc_mask (every RX WQE is one BU)
  uint64_t rearm;    // rearm_data of a received mbuf: data_off, refcnt 1, nb_segs 1, port
  uint32_t desc_mask;
  uint32_t buf_len;  // SGE size: data room after the headroom
  // Cache line 1: refill and the rare paths.
  WorkQueue rq;
  rte_mempool* mp;
  uint32_t lkey;  // the pool's one lkey, written once into every WQE; kInvalidLkey: per buffer
  // From an mbuf of the pool to its frame (buf_addr + headroom) when that is the same for every
  // mbuf (rx_queue.cpp pool_frame_offset); 0: each mbuf's buf_addr is read.
  uint32_t frame_offset;
  const hw::Cqe* partial_cqe;  // a coalesced CQE whose packets did not all fit in the last burst
  uint16_t free_thresh;        // refill once this many WQEs were consumed (rx_free_thresh)
  uint16_t partial_next;       // its next packet_info index
  uint16_t port_id;
  uint16_t queue_id;
  // Cache line 2 on.
  uint32_t recycled;  // consumed WQEs whose buffer waits in its slot (tagged) for the refill
  RxMeta meta;
  RxQueueStats stats;
  PortPriv* priv;
  MrQueueCache mr;
  // Where `partial_cqe` points: the NIC may rewrite a CQ slot once the head moved past it
  // (doc/hardware.md §4.5). Two, so that the CQE a burst carried over stays readable while that
  // burst saves the next one.
  hw::Cqe partial_copies[2];
  // control path
  uint32_t nb_desc;
  int socket;
  ibv_cq* ib_cq;
  ibv_wq* ib_wq;
  ibv_comp_channel* ib_channel;  // RX interrupts only
  uint8_t deferred_start;        // rx_deferred_start: stays stopped at dev_start
};
static_assert(offsetof(RxQueue, buf_len) + sizeof(uint32_t) <= kHotLine);
static_assert(offsetof(RxQueue, rq) == kHotLine);
static_assert(offsetof(RxQueue, queue_id) + sizeof(uint16_t) <= 2 * kHotLine);

// What the completion path needs of a posted WQE. Its mbuf sits at the same index of the queue's
// mbuf ring, apart: completed mbufs go back to their pool straight from that ring, in bulk.
struct TxDesc {
  uint16_t bu;          // basic units of its WQE
  uint16_t suppressed;  // posted with CQE suppression: completes with a later CQE
  uint32_t start_bu;    // where its WQE starts (free-running basic units)
};

// The unit of a TX CQE's tx_wqe_offset as a queue has learnt it (doc/hardware.md §4.7).
inline constexpr uint8_t kWqeOffsetUnknown = 0;
inline constexpr uint8_t kWqeOffsetBu = 1;
inline constexpr uint8_t kWqeOffsetBytes = 2;

// Hot part first: what every burst reads or writes fits the queue's first two cache lines (checked
// below); statistics follow, then what only the control path uses, on lines of its own.
struct alignas(RTE_CACHE_LINE_SIZE) TxQueue {
  // data path, line 0: ring positions and thresholds
  QueueGate gate;
  uint32_t desc_mask;
  uint32_t desc_head;       // free-running: next descriptor to post
  uint32_t desc_tail;       // free-running: oldest descriptor not completed
  uint32_t reclaim_below;   // a burst reclaims when fewer descriptors are free (tx_free_thresh)
  uint16_t rs_thresh;       // packets between CQE requests (tx_rs_thresh, at burst ends)
  uint16_t since_cqe;       // packets posted since the last WQE that asked for a CQE
  uint8_t wqe_offset_unit;  // kWqeOffset*: learnt from okay CQEs, reset at start
  uint8_t fast_free;        // RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE: completed mbufs go back in bulk
  uint16_t port_id;
  WorkQueue sq;
  // line 1: descriptors and their mbufs, the completion queue, the OOB template
  TxDesc* descs;
  rte_mbuf** mbufs;  // entry i: the packet of descriptor i
  CompletionQueue cq;
  TxOobTemplate oob;
  // line 2: the port, checksum seed mark and segment limits, then the per-queue MR cache (read per
  // burst)
  PortPriv* priv;
  uint64_t seeded_flag;  // mbuf dynflag tx_prepare sets on seeded packets (0: none registered)
  uint32_t max_sge;
  uint32_t max_segs;  // segments a packet may have: max_sge with MULTI_SEGS, else 1
  MrQueueCache mr;
  TxQueueStats stats;
  // the short OOB of a checksum packet, by its flags (tx_oob.h): read per checksum packet
  alignas(kHotLine) TxCsumOobWords csum_oob;
  // control path
  alignas(RTE_CACHE_LINE_SIZE) uint32_t nb_desc;
  uint16_t queue_id;
  uint16_t free_thresh;  // as configured (0: reclaim at every burst)
  int socket;
  uint8_t tso;  // RTE_ETH_TX_OFFLOAD_TCP_TSO is on (tx_prepare accepts TCP_SEG mbufs); in padding
  ibv_cq* ib_cq;
  ibv_qp* ib_qp;
  uint8_t deferred_start;    // tx_deferred_start: stays stopped at dev_start
  TxStallWatch stall_watch;  // the TX stall watchdog's last look (tx_watchdog.h)
};
static_assert(offsetof(TxQueue, sq) + sizeof(WorkQueue) <= kHotLine,
              "ring positions, thresholds and the SQ share the first cache line");
static_assert(offsetof(TxQueue, descs) == kHotLine &&
                  offsetof(TxQueue, oob) + sizeof(TxOobTemplate) <= 2 * kHotLine,
              "descriptors, mbufs, CQ and OOB template share the second cache line");
static_assert(offsetof(TxQueue, priv) == 2 * kHotLine,
              "the port, seed mark and segment limits start the third cache line");

// The queue's OOB words (tx_oob.h), from its CQ, SQ and vPort offset: at every queue start.
inline void set_tx_oob(TxQueue& q, uint32_t cq_id, uint32_t sq_id, uint32_t vp_offset) {
  q.oob = make_tx_oob_template(cq_id, sq_id, vp_offset);
  q.csum_oob = make_tx_csum_oob_words(q.oob);
}

struct PortPriv {
  ibv_context* ctx;
  ibv_pd* pd;
  ibv_pd* parent_pd;  // pd_context carries the IB port; all queues are created on it
  uint8_t ib_port;    // 1-based
  uint16_t port_id;
  char ifname[IF_NAMESIZE];  // the kernel netdev of this port, for messages
  char name[RTE_ETH_NAME_MAX_LEN];
  rte_ether_addr mac;
  DeviceCaps caps;
  int socket;

  uint8_t rss_key[hw::kRssKeySize];
  uint64_t rss_hf;
  // The indirection table's WQ order (rss.h): position i holds RX queue reta[i]; identity unless
  // reta_queues equals the number of RX queues.
  uint16_t reta[kMaxRxQueues];
  uint16_t reta_queues;

  void* db_page;  // primary's doorbell page (secondaries map their own)
  ibv_rwq_ind_table* ind_table;
  ibv_qp* rss_qp;
  MrPortCache mr;
  rte_intr_handle* intr;     // device events (verbs async fd)
  rte_intr_handle* rx_intr;  // RX queue interrupts: one completion channel fd per queue
  bool started;
  // Queue structs by queue id, kept from their first setup until dev_close (kept_queues.h).
  RxQueue* kept_rxq[RTE_MAX_QUEUES_PER_PORT];
  TxQueue* kept_txq[RTE_MAX_QUEUES_PER_PORT];

  // Recovery from a VF removal (recovery.h); interrupt thread and control path only.
  uint32_t recovery;            // Recovery
  uint32_t in_control;          // 1 while dev_start/stop/close run: recovery steps wait
  uint32_t recovery_timeout_s;  // devarg recovery_timeout
  uint64_t recovery_deadline;   // rte_get_timer_cycles() at which recovery gives up

  // The TX stall watchdog (tx_watchdog.h): devarg tx_stall_timeout (0: off), resets done.
  uint32_t tx_stall_timeout_s;
  uint64_t tx_stall_resets;

  // The kernel's drop counter of the VF (hw_counters.h); control path of any process.
  char rx_missed_path[384];   // ibdev_path (at most 256) + /device/net/<if>/statistics/...
  uint64_t rx_missed_base;    // its value at the last stats_reset
  uint32_t rx_missed_logged;  // bits: "cannot read" (1), "netdev down" (2) were said

  // The kernel netdev's MTU (netdev_mtu.h): its sysfs file and max MTU (the adapter's).
  char mtu_path[384];
  uint32_t max_mtu;

  // The port's link (link_state.h): the RDMA device's sysfs folder (ibv_device::ibdev_path, at
  // most IBV_SYSFS_PATH_MAX) where its netdev is looked up, and what the link watch last saw.
  char ibdev_path[256];
  uint64_t link_watch_seen;  // interrupt thread only
  // The netdev's carrier while it is down, as rtnetlink reports it (link_state.h): it has read 1
  // (the kernel follows the NIC's link events, so a 0 means the link is down), and the one line
  // naming where the link comes from was said.
  bool carrier_seen_on;
  bool link_sources_told;
};

// Process-local data of a port (rte_eth_dev::process_private): what differs between processes.
struct ProcessPrivate {
  void* db_page;                  // the doorbell page as mapped in this process
  uint32_t bursts_open;           // 0 once a secondary detaches: its bursts stop (queue_gate.h)
  MrRegistrar registrar;          // verbs in the primary, a request to the primary in a secondary
  MrEventSubscription mr_events;  // keeps the port's MR table in step with this process's pools
};

inline PortPriv* priv_of(const rte_eth_dev* dev) {
  return static_cast<PortPriv*>(dev->data->dev_private);
}
inline ProcessPrivate& process_private_of(uint16_t port_id) {
  return *static_cast<ProcessPrivate*>(rte_eth_devices[port_id].process_private);
}
// A port's queue idx (nullptr when it was never set up).
inline RxQueue* rxq_of(const rte_eth_dev* dev, uint16_t idx) {
  return static_cast<RxQueue*>(dev->data->rx_queues[idx]);
}
inline TxQueue* txq_of(const rte_eth_dev* dev, uint16_t idx) {
  return static_cast<TxQueue*>(dev->data->tx_queues[idx]);
}

// A port id as the argument of an EAL alarm or interrupt callback, and back.
inline void* port_callback_arg(uint16_t port_id) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(port_id));
}
inline uint16_t port_of_callback_arg(void* arg) {
  return static_cast<uint16_t>(reinterpret_cast<uintptr_t>(arg));
}

// Ring sizes: a power of two within the device's limits.
uint32_t ring_size_for(uint32_t nb_desc, uint32_t max_desc);
uint32_t max_desc_of(const DeviceCaps& caps);

}  // namespace mana
