// SPDX-License-Identifier: BSD-3-Clause
// The emulated MANA PCI function: what the kernel's mana_ib driver and the NIC do together.
//
// The verbs layer (emu/verbs, standing in for libibverbs + libmana) translates rdma-core calls into
// these control calls; the device model implements queue creation rules, memory registration,
// vPort ownership, RSS steering and the data path of doc/hardware.md §4 (WQE parsing, CQE writing,
// offloads).
//
// Threading: control calls come from application threads and take the device's control lock; the
// data path runs in the device thread (`Device::poll`), which sees doorbells through `ring`.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/hw_behaviour.h"
#include "wire/wire.h"

namespace mana::emu {

// Limits of doc/hardware.md §6.1/§6.4. Defaults: a 6.2-era kernel with rdma-core 44 (256 WR/CQE).
struct DeviceLimits {
  uint32_t max_qp = 64;
  uint32_t max_qp_wr = 256;
  uint32_t max_cqe = 256;
  uint32_t max_send_sge = 30;
  uint32_t max_recv_sge = 15;
  uint32_t max_mr = 0x7FFFFFFF;  // INT_MAX on 6.2; 0xFFFFFF on later kernels
  uint64_t max_mr_size = UINT64_MAX;
  uint32_t mtu = 1500;  // every netdev's MTU at start (hw adapter-mtu bounds later changes)

  static DeviceLimits kernel_6_2() { return {}; }
  // Ethernet device of 2025+ kernels (doc/hardware.md §6.1): 2048 WR/CQE, 0xFFFFFF MRs.
  static DeviceLimits kernel_2025() {
    DeviceLimits l;
    l.max_qp_wr = l.max_cqe = 2048;
    l.max_mr = 0xFFFFFF;
    return l;
  }
};

struct PortConfig {
  std::array<uint8_t, 6> mac{};
  std::string ifname;         // kernel netdev name shown in sysfs, e.g. "eth1"
  bool netdev_up = false;     // a raw QP on a port whose netdev is up fails (hw.vport_busy_errno)
  std::string wire = "loop";  // loop | pair | null | tap:<ifname> | shm:<name> | fabric:<name>
  std::array<uint8_t, 4> ipv4{};  // the port's address on a fabric wire; 0.0.0.0: none
  std::string netvsc{};  // name of the synthetic (netvsc) interface with the same MAC; "": none
  // A synthetic NIC with the same MAC bound to uio_hv_generic, for DPDK's net_netvsc
  // (doc/emulator.md "The synthetic NIC"); exclusive with `netvsc`.
  bool uio_netvsc = false;
  // The netdev's sysfs `mtu` file: the vPort takes its MTU from it when a raw QP configures the
  // vPort; "": the MTU stays limits.mtu.
  std::string mtu_file{};
};

struct VfConfig {
  std::string pci_addr = "7870:00:00.0";
  std::vector<PortConfig> ports;  // 1..8
  DeviceLimits limits;
  bool rx_coalescing = false;  // CQE_RX_COALESCED_4 (kernels >= 6.5) or one CQE per packet
  bool anti_spoof = true;      // drop TX frames whose source MAC is not the port's (CQE_TX_SA_DROP)
  uint32_t tx_pps = 0;         // each port sends at most this many WQEs a second (0: no cap)
  HwBehaviour hw;              // open behaviours (doc/hardware.md)
};

// Signals a completion channel (an eventfd the verbs layer owns) when an armed CQ gets a CQE.
using CqEventFd = int;

// One entry of an RSS QP's response (doc/hardware.md §3.4): the ids now valid for table entry i.
struct RqBinding {
  uint32_t cq_id;
  uint32_t wq_id;
};

struct SqBinding {
  uint32_t sq_id;
  uint32_t cq_id;
  uint32_t tx_vp_offset;
};

// Counters the tests and the control channel read (all monotonic).
struct QueueCounters {
  uint64_t wqes = 0;     // WQEs consumed
  uint64_t packets = 0;  // frames sent (SQ) or delivered (RQ)
  uint64_t bytes = 0;
  uint64_t error_cqes = 0;  // error CQEs written
  uint64_t cqes = 0;        // CQEs written
  uint64_t doorbells = 0;
  uint64_t wqe_cnt_doorbells =
      0;  // RQ doorbells with a non-zero wqe_cnt (accepted, doc/hardware.md §4.8)
  uint64_t zero_length_cqes = 0;  // RQ: extra CQEs with packet length 0 (hw zero-length-cqe)
  // The queue needed a CQE while its CQ had gone 8 wraps without a CQ doorbell (hw cq-doorbell):
  // one per stall, or the one that failed the queue.
  uint64_t cq_doorbell_violations = 0;
};

struct PortCounters {
  uint64_t rx_no_wqe_drops = 0;  // hc_rx_discards_no_wqe: frames with no posted RX WQE
  uint64_t rx_filtered = 0;      // frames not addressed to the port
  uint64_t rx_mtu_drops = 0;     // oversize frames dropped (hw rx-oversize=drop) or beyond 64 KiB
  uint64_t tx_frames = 0;
  uint64_t rx_frames = 0;      // frames taken from the wire (before filtering)
  uint64_t tx_wire_drops = 0;  // frames the wire refused
  uint64_t rx_oversize = 0;    // frames longer than the vPort MTU, whatever rx-oversize does
  // hw rx-steering-on-destroy=keep (doc/hardware.md §9.22): frames steered to the queues of a
  // destroyed RSS QP, lost; and those completed as RX CQEs on a CQ that took a stale CQ id.
  uint64_t rx_stale_steering_drops = 0;
  uint64_t rx_stale_steering_cqes = 0;
};

// Live-object counts, for leak checks after a driver closes (all back to zero).
struct LiveObjects {
  uint32_t pds = 0, mrs = 0, cqs = 0, wqs = 0, sqs = 0, rss_qps = 0, contexts = 0;
};

// Faults injected through the control channel.
struct Fault {
  // kStall: the port's live SQs stop completing (their WQEs stay posted, no CQE ever comes), as
  // a queue the hardware stopped serving (doc/hardware.md §2.12); queues created later work.
  enum class Kind { kErrorCqe, kBadLkey, kStall } kind = Kind::kErrorCqe;
  bool tx = true;      // SQ (true) or RQ
  uint32_t port = 0;   // 0-based port index
  uint32_t count = 1;  // N WQEs get the fault
  // For kErrorCqe: CQE_TX_INVALID_OOB by default (RX: CQE_RX_TRUNCATED = 4).
  uint32_t cqe_type = 35;
  uint32_t skip = 0;   // kErrorCqe: WQEs let through before the first faulted one
  uint32_t every = 1;  // kErrorCqe: then one faulted WQE every `every` (1: consecutive)
};

class Device {
 public:
  // Null when the config is invalid (no port, more than 8) or a wire spec is bad.
  static std::unique_ptr<Device> create(const VfConfig& config);
  // Same with wires built by the caller (tests, benchmarks); `wires` must serve every port.
  static std::unique_ptr<Device> create(const VfConfig& config, std::unique_ptr<WireSet> wires);
  virtual ~Device() = default;

  virtual const VfConfig& config() const = 0;

  // ---- control (mana_ib); every call returns 0 or a positive errno as the kernel would ----------
  // A verbs context (ucontext) owns one doorbell page; `page` is where that page is mapped in this
  // process (the verbs layer maps the memfd; the device reads it in poll mode).
  virtual int open_context(volatile uint64_t* page, uint32_t* context_id) = 0;
  virtual int close_context(uint32_t context_id) = 0;
  virtual int alloc_pd(uint32_t context_id, uint32_t* pd_id) = 0;
  virtual int dealloc_pd(uint32_t pd_id) = 0;  // EBUSY while MRs or QPs use it
  // `access` uses IBV_ACCESS_* bits; returns the lkey (== rkey).
  virtual int reg_mr(uint32_t pd_id, uint64_t addr, uint64_t length, uint32_t access,
                     uint32_t* lkey) = 0;
  virtual int dereg_mr(uint32_t lkey) = 0;
  // CQ ring of `count` 64-byte entries at `buf`; `event_fd` < 0 when no completion channel (and
  // ignored without hw.cq_eq: the CQ has no EQ, so it never signals).
  virtual int create_cq(uint32_t context_id, void* buf, uint32_t count, CqEventFd event_fd,
                        uint32_t* cq_handle) = 0;
  virtual int destroy_cq(uint32_t cq_handle) = 0;  // EBUSY while bound to a live queue
  // An RQ: not instantiated (no id) until an RSS QP binds it.
  virtual int create_wq(uint32_t context_id, uint32_t pd_id, void* buf, uint32_t size_bytes,
                        uint32_t max_wr, uint32_t max_sge, uint32_t cq_handle,
                        uint32_t* wq_handle) = 0;
  virtual int destroy_wq(uint32_t wq_handle) = 0;
  // Raw packet QP: one SQ bound to `cq_handle` on IB port `port` (1-based). Configures the vPort
  // for `pd_id` on its first QP; hw.vport_busy_errno (ENODEV or EBUSY) when the port's netdev is up
  // or another PD owns the vPort.
  virtual int create_raw_qp(uint32_t context_id, uint32_t pd_id, uint32_t port, void* sq_buf,
                            uint32_t sq_size_bytes, uint32_t max_send_wr, uint32_t max_send_sge,
                            uint32_t cq_handle, SqBinding* out, uint32_t* qp_handle) = 0;
  // RSS QP over `wq_handles` (2^log_size of them, ≤ 64): instantiates every RQ and its CQ and
  // programs the vPort's 64-entry steering table; `out` gets one binding per table entry. With
  // hw.raw_qp_first, EINVAL unless a raw QP of `pd_id` has configured the port's vPort.
  virtual int create_rss_qp(uint32_t context_id, uint32_t pd_id, uint32_t port,
                            const uint32_t* wq_handles, unsigned log_size, uint8_t hash_function,
                            const uint8_t* key, uint32_t key_len, RqBinding* out,
                            uint32_t* qp_handle) = 0;
  virtual int destroy_qp(uint32_t qp_handle) = 0;

  // ---- doorbells
  // --------------------------------------------------------------------------------- A 64-bit
  // store of `value` at byte `offset` of context `context_id`'s doorbell page (trap mode and tests
  // call this; in poll mode the device thread samples the page itself). Thread-safe and lock-free:
  // the store is queued and takes effect in the next `poll`.
  virtual void ring(uint32_t context_id, uint32_t offset, uint64_t value) = 0;
  // Poll mode: the device samples each context's page in `poll`. Exact only with one writer per
  // slot, so while it is on a context may hold one SQ and one RQ (more: EBUSY, doc/emulator.md).
  virtual void set_poll_doorbells(bool on) = 0;
  // Poll mode under lockstep (doc/emulator.md "Lockstep"): a context may hold several SQs and RQs.
  // The verbs layer traps the context's stores from each queue creation until the application's
  // next step (`hold_doorbell_page`, `release_doorbell_page`), so the doorbells a port start rings
  // on every queue at once all arrive; afterwards the application steps the device between two
  // doorbells of one slot (one burst per queue, then a step).
  virtual void set_shared_doorbell_slots(bool on) = 0;
  // Poll mode: samples the context's page one last time, then leaves it alone while the verbs layer
  // traps its stores into `ring`.
  virtual void hold_doorbell_page(uint32_t context_id) = 0;
  // After `hold_doorbell_page`, the page writable again and its trapped stores rung: each slot
  // takes the last value rung into it (what the stores would have left there), and sampling goes on
  // from it.
  virtual void release_doorbell_page(uint32_t context_id) = 0;

  // ---- data path (device thread)
  // ----------------------------------------------------------------- Processes pending doorbells,
  // TX WQEs, wire input and RX delivery once; returns work done.
  virtual unsigned poll() = 0;

  // ---- control channel
  // -----------------------------------------------------------------------------
  virtual void set_netdev_up(uint32_t port, bool up) = 0;  // 0-based port index
  virtual bool netdev_up(uint32_t port) const = 0;
  virtual void inject(const Fault& fault) = 0;
  // Hot removal: every queue dies (no further completions), async fatal events are raised by the
  // verbs layer; `present(false)` makes every control call fail with ENODEV until `present(true)`.
  virtual void set_present(bool present) = 0;
  // Whether a destroy of an object of a disassociated context frees it (libibverbs frees its
  // memory only with RDMAV_ALLOW_DISASSOC_DESTROY, doc/hardware.md §2.7): when false the object
  // stays counted by live_objects, as the user-space memory that still holds it. Default true.
  virtual void set_disassociate_destroy(bool frees) = 0;
  // Whether a hot removal disassociated the context: uverbs then answers every command on it,
  // destroys included, with EIO before any use count is looked at (doc/emulator.md).
  virtual bool context_disassociated(uint32_t context_id) = 0;
  virtual bool present() const = 0;

  virtual QueueCounters sq_counters(uint32_t sq_id) const = 0;
  virtual QueueCounters rq_counters(uint32_t rq_id) const = 0;
  virtual PortCounters port_counters(uint32_t port) const = 0;
  virtual LiveObjects live_objects() const = 0;
  // Doorbells that named no queue of their context, used an unknown offset or overran a ring.
  virtual uint64_t bad_doorbells() const = 0;
};

}  // namespace mana::emu
