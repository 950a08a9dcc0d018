// SPDX-License-Identifier: BSD-3-Clause
#include "device/cq_producer.h"

#include <unistd.h>

#include <cstdio>

namespace mana::emu {

void cq_signal_channel(const Cq& cq) {
  if (cq.event_fd < 0) return;
  const uint64_t one = 1;
  // An eventfd only fails when its counter would overflow: the event is then pending anyway.
  [[maybe_unused]] const ssize_t n = ::write(cq.event_fd, &one, sizeof(one));
}

void cq_reset(Cq& cq) {
  cq.slot = 0;
  cq.owner = 1;
  cq.index8 = cq.count;  // the consumer's head starts at count (doc/hardware.md §4.5)
  cq.armed = false;
  cq.produced = cq.reported = 0;
  cq.stalled = cq.failed = cq.warned_doorbell = false;
}

void cq_arm(Cq& cq, uint32_t index) {
  if (index != cq.index8) {
    cq.armed = false;
    cq_signal_channel(cq);  // CQEs beyond the consumer's index already exist
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
