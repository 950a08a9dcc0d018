// SPDX-License-Identifier: BSD-3-Clause
#include "device/cq_producer.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "device/prefetch.h"

namespace mana::emu {

namespace {

void signal_channel(const Cq& cq) {
  if (cq.event_fd < 0) return;
  const uint64_t one = 1;
  // An eventfd only fails when its counter would overflow: the event is then pending anyway.
  [[maybe_unused]] const ssize_t n = ::write(cq.event_fd, &one, sizeof(one));
}

}  // namespace

void cq_reset(Cq& cq) {
  cq.slot = 0;
  cq.owner = 1;
  cq.index8 = cq.count;  // the consumer's head starts at count (doc/hardware.md §4.5)
  cq.armed = false;
  cq.produced = cq.reported = 0;
  cq.stalled = cq.failed = cq.warned_doorbell = false;
}

void cq_post(Cq& cq, const hw::Cqe& cqe, uint32_t wq_id, bool is_sq) {
  hw::Cqe& dst = cq.ring[cq.slot];
  // The slot a few CQEs on: the driver read it on the last lap (device/prefetch.h).
  constexpr uint32_t kAhead = 4;
  if (cq.count > kAhead) {
    const uint32_t ahead = cq.slot + kAhead;
    prefetch_for_write(&cq.ring[ahead < cq.count ? ahead : ahead - cq.count]);
  }
  // One fixed-size copy of the dwords before the owner dword: inlined (a loop became a libc call).
  std::memcpy(dst.dw, cqe.dw, hw::Cqe::kOwnerDword * sizeof(dst.dw[0]));
  uint32_t last = hw::Cqe::WqNum::set(0, wq_id);
  last = hw::Cqe::IsSq::set(last, is_sq);
  last = hw::Cqe::Owner::set(last, cq.owner);
  // The consumer tests the owner bits first and then reads the data: publish the data first.
  std::atomic_ref<uint32_t>(dst.dw[hw::Cqe::kOwnerDword]).store(last, std::memory_order_release);

  if (++cq.slot == cq.count) {
    cq.slot = 0;
    cq.owner = (cq.owner + 1) & hw::kOwnerMask;
  }
  if (++cq.index8 == cq.count * 8) cq.index8 = 0;
  ++cq.produced;
  if (cq.armed) {
    cq.armed = false;
    signal_channel(cq);
  }
}

void cq_arm(Cq& cq, uint32_t index) {
  if (index != cq.index8) {
    cq.armed = false;
    signal_channel(cq);  // CQEs beyond the consumer's index already exist
  } else {
    cq.armed = true;
  }
}

void cq_doorbell_seen(Cq& cq, uint32_t index) {
  const uint32_t span = cq.count * 8;
  const uint32_t backlog = (cq.index8 + span - index % span) % span;
  cq.reported = cq.produced - backlog;
  cq.stalled = false;
}

bool cq_admits_slow(Cq& cq, WorkQueue& q, uint32_t n) {
  if (cq.failed) {
    q.dead = true;
    return false;
  }
  if (cq.stalled) return false;
  if (cq.produced + n - cq.reported < cq.count * 8) return true;
  ++q.counters.cq_doorbell_violations;
  const bool stall = cq.doorbell_rule == HwBehaviour::CqDoorbellRule::kStall;
  if (stall)
    cq.stalled = true;
  else
    cq.failed = q.dead = true;
  if (!cq.warned_doorbell) {
    cq.warned_doorbell = true;
    std::fprintf(stderr,
                 "mana-emu: CQ 0x%x got no CQ doorbell for 8 wraps (%u CQEs): %s (hw "
                 "cq-doorbell=%s); ring the CQ doorbell at least every 8 wraps, arm or not\n",
                 cq.id, cq.count * 8,
                 stall ? "its queues stall until one arrives" : "its queues have failed",
                 stall ? "stall" : "error");
  }
  return false;
}

}  // namespace mana::emu
