// SPDX-License-Identifier: BSD-3-Clause
// The device model's objects (what mana_ib and the NIC keep per context, PD, MR, queue and port).
// Owned by DeviceImpl; every field is accessed under the device lock (control calls and `poll`).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "device/device.h"
#include "device/rss_hasher.h"
#include "device/tx_rate_cap.h"
#include "mana/gdma_format.h"

namespace mana::emu {

struct Port;
struct RssQp;

struct Context {
  uint32_t id = 0;
  volatile uint64_t* page = nullptr;
  std::array<uint64_t, 3> last_sampled{};  // SQ, RQ, CQ slots as last seen in poll mode
  bool held = false;          // poll mode: its stores are trapped for now, its page not sampled
  uint32_t users = 0;         // PDs, CQs, WQs, QPs created in it
  uint32_t sqs = 0, rqs = 0;  // instantiated queues ringing through this page
  // Hot removal disassociated it (doc/hardware.md §2.7): its hardware is gone, every create fails
  // and every destroy of its objects frees the object and answers EIO, as uverbs does.
  bool disassociated = false;
};

struct Pd {
  uint32_t id = 0;
  uint32_t context_id = 0;
  uint32_t users = 0;  // MRs, WQs, QPs
};

struct Mr {
  uint32_t lkey = 0;
  uint32_t pd_id = 0;
  uint32_t context_id = 0;
  uint64_t addr = 0;
  uint64_t len = 0;
  uint32_t access = 0;
};

enum class QueueKind : uint8_t { kSq, kRq, kCq };

struct QueueBase {
  explicit QueueBase(QueueKind k) : kind(k) {}
  QueueKind kind;
  uint32_t context_id = 0;
  uint32_t id = 0;    // hardware id; 0 while not instantiated
  bool dead = false;  // hot-removed: never completes again
};

struct Cq : QueueBase {
  Cq() : QueueBase(QueueKind::kCq) {}
  uint32_t handle = 0;
  hw::Cqe* ring = nullptr;
  uint32_t count = 0;
  int event_fd = -1;
  uint32_t users = 0;  // WQs and SQs attached to it
  // Producer position of the next CQE: slot, owner bits, index in the 8·count doorbell space.
  uint32_t slot = 0;
  uint32_t owner = 1;
  uint32_t index8 = 0;
  bool armed = false;
  // The CQ doorbell rule of mana_en.c (hw cq-doorbell, doc/hardware.md §4.8): CQEs written since
  // the reset, and that count minus the backlog the last CQ doorbell reported.
  HwBehaviour::CqDoorbellRule doorbell_rule = HwBehaviour::CqDoorbellRule::kOff;
  uint32_t produced = 0;
  uint32_t reported = 0;
  bool stalled = false;  // takes no CQE until the next CQ doorbell
  bool failed = false;   // takes no CQE again (until bound anew)
  bool warned_doorbell = false;
};

// Positions on an SQ/RQ are 27-bit BU offsets (doc/hardware.md §4.1).
inline constexpr uint32_t kBuMask = (1u << 27) - 1;

struct WorkQueue : QueueBase {
  using QueueBase::QueueBase;
  uint8_t* ring = nullptr;
  uint32_t size = 0;  // bytes, power of two
  uint32_t consumed_bu = 0;
  uint32_t tail_bu = 0;  // from the last doorbell
  Cq* cq = nullptr;
  uint32_t pd_id = 0;
  Port* port = nullptr;
  QueueCounters counters;
  uint32_t pending_bu() const { return (tail_bu - consumed_bu) & kBuMask; }
  uint32_t size_bu() const { return size / hw::kBasicUnit; }
};

struct Sq : WorkQueue {
  Sq() : WorkQueue(QueueKind::kSq) {}
  uint32_t qp_handle = 0;
  uint32_t tso_sent = 0;  // segments of the TSO WQE at the head already sent (a wire said retry)
  bool stalled = false;   // fault tx stall: consumes nothing, completes nothing, until destroyed
};

struct Rq : WorkQueue {
  Rq() : WorkQueue(QueueKind::kRq) {}
  uint32_t handle = 0;
  RssQp* rss = nullptr;  // the RSS QP that instantiated it
  // The kernel hands the WQ's and its CQ's DMA regions to the RQ object of the first RSS QP and
  // they go with it: the WQ cannot serve another RSS QP (doc/hardware.md §2.5).
  bool region_taken = false;
  bool warned_wqe_cnt = false;
  // CQE_RX_COALESCED_4 being filled (coalesced_count packets so far).
  hw::Cqe coalesced{};
  uint32_t coalesced_count = 0;
  uint32_t completions_since_zero_length = 0;  // hw zero-length-cqe
};

struct RssQp {
  uint32_t handle = 0;
  Port* port = nullptr;
  uint32_t pd_id = 0;
  uint32_t context_id = 0;
  std::vector<Rq*> rqs;  // distinct RQs of the table
  std::unique_ptr<RssHasher> hasher;
  // False for a one-entry table unless hw single-queue-hash: the kernel then programs the vPort
  // with RSS off, so CQEs carry no hash.
  bool hashes = true;
};

// An injected error-CQE fault: `skip` WQEs pass, then one of every `every` WQEs fails until
// `remaining` faults were injected.
struct FaultPlan {
  uint32_t remaining = 0;
  uint32_t skip = 0;
  uint32_t every = 1;
  uint32_t cqe_type = 0;
  bool armed() const { return remaining != 0; }
  // Called once per WQE the queue consumes: true when this WQE gets the fault.
  bool take() {
    if (remaining == 0) return false;
    if (skip != 0) {
      --skip;
      return false;
    }
    --remaining;
    skip = every - 1;
    return true;
  }
};

struct PortFaults {
  FaultPlan tx_error, rx_error;
  uint32_t tx_bad_lkey_count = 0, rx_bad_lkey_count = 0;
};

// hw rx-steering-on-destroy=keep (doc/hardware.md §9.22): the RX steering a destroyed RSS QP left
// on its vPort, until an RSS QP (or the kernel netdev) programs steering again. Each entry keeps
// the hardware ids of the RQ and CQ it named; the hasher keeps the destroyed QP's key.
struct StaleSteering {
  bool active = false;
  bool hashes = false;
  std::array<uint32_t, hw::kRssTableSize> cq_ids{};
  std::array<uint32_t, hw::kRssTableSize> rq_ids{};
  uint32_t default_cq_id = 0, default_rq_id = 0;  // non-IP frames
  std::unique_ptr<RssHasher> hasher;
};

struct Port {
  TxRateCap rate_cap;               // VfConfig::tx_pps
  TxRateCap* shared_cap = nullptr;  // the wire's, shared with the synthetic NIC; else rate_cap
  uint32_t index = 0;
  std::array<uint8_t, 6> mac{};
  bool netdev_up = false;
  WireEndpoint* wire = nullptr;
  bool wire_holds_rx_frames = false;  // wire->holds_rx_frames(), asked once
  // The wire's own rings when it is an in-process one (wire->direct_tx_ring(), asked once): the
  // data path pushes and pops them without a virtual call (wire_io.h).
  FrameRing* tx_ring = nullptr;
  FrameRing* rx_ring = nullptr;
  uint32_t vp_offset = 0;
  uint32_t mtu = 0;       // the netdev's MTU when the vPort was configured (the data path's limit)
  uint32_t vport_pd = 0;  // PD owning the vPort, 0 when free
  uint32_t vport_users = 0;
  std::vector<Sq*> sqs;
  RssQp* rss = nullptr;
  std::array<Rq*, hw::kRssTableSize> steering{};  // entry i = ind_tbl[i mod 2^log]
  Rq* default_rq = nullptr;                       // non-IP frames: the table's last WQ
  PortCounters counters;
  PortFaults faults;
  StaleSteering stale;  // hw rx-steering-on-destroy=keep
};

}  // namespace mana::emu
