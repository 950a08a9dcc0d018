// SPDX-License-Identifier: BSD-3-Clause
// The producer side of a CQ (doc/hardware.md §4.5, §4.8): owner bits across wraps, data-then-owner
// write order, and one-shot arming that signals the CQ's completion channel.
#pragma once

#include <atomic>
#include <cstring>

#include "device/objects.h"
#include "device/prefetch.h"

namespace mana::emu {

// What a WQE's completion reports: a CQE type (hw::CqeType) and a vendor error code.
struct CqeStatus {
  uint32_t type;
  uint32_t vendor_err = 0;
};

// dw0 of a CQE: type, client type "completion", vendor error.
inline uint32_t cqe_header(CqeStatus s) {
  uint32_t dw0 = hw::Cqe::Type::set(0, s.type);
  dw0 = hw::Cqe::ClientType::set(dw0, hw::kClientTypeCompletion);
  return hw::Cqe::VendorErr::set(dw0, s.vendor_err);
}

// Resets the producer position for a CQ being bound to a queue (a fresh hardware CQ object).
void cq_reset(Cq& cq);

// Signals the CQ's completion channel (an eventfd), if it has one.
void cq_signal_channel(const Cq& cq);

// Writes a CQE into the next slot: dw0..dw14 zeroed, then `fill(dw)` sets the ones it needs, in
// place (no staged copy); dw15 is built here from `wq_id` and `is_sq`. Signals the completion
// channel when armed. Inline: one or two per frame.
template <typename Fill>
[[gnu::always_inline]] inline void cq_post_in_place(Cq& cq, uint32_t wq_id, bool is_sq,
                                                    Fill&& fill) {
  // The producer position moves first, from locals: the CQE stores below may alias Cq's fields
  // as far as the compiler knows, and would make it reload them.
  const uint32_t slot = cq.slot, count = cq.count, owner = cq.owner;
  hw::Cqe* const ring = cq.ring;
  if (slot + 1 == count) {
    cq.slot = 0;
    cq.owner = (owner + 1) & hw::kOwnerMask;
  } else {
    cq.slot = slot + 1;
  }
  if (++cq.index8 == count * 8) cq.index8 = 0;
  ++cq.produced;
  const bool armed = cq.armed;
  cq.armed = false;
  hw::Cqe& dst = ring[slot];
  // The slot a few CQEs on: the driver read it on the last lap (device/prefetch.h).
  constexpr uint32_t kAhead = 4;
  if (count > kAhead) {
    const uint32_t ahead = slot + kAhead;
    prefetch_for_write(&ring[ahead < count ? ahead : ahead - count]);
  }
  // The dwords before the owner dword; fixed sizes, so the stores stay inline.
  std::memset(dst.dw, 0, hw::Cqe::kOwnerDword * sizeof(dst.dw[0]));
  fill(dst.dw);
  uint32_t last = hw::Cqe::WqNum::set(0, wq_id);
  last = hw::Cqe::IsSq::set(last, is_sq);
  last = hw::Cqe::Owner::set(last, owner);
  // The consumer tests the owner bits first and then reads the data: publish the data first.
  std::atomic_ref<uint32_t>(dst.dw[hw::Cqe::kOwnerDword]).store(last, std::memory_order_release);
  if (armed) [[unlikely]]
    cq_signal_channel(cq);
}

// Writes `cqe` (dw0..dw14 filled by the caller; dw15 is built here from `wq_id` and `is_sq`) into
// the next slot, as cq_post_in_place.
inline void cq_post(Cq& cq, const hw::Cqe& cqe, uint32_t wq_id, bool is_sq) {
  cq_post_in_place(cq, wq_id, is_sq, [&cqe](uint32_t* dw) {
    std::memcpy(dw, cqe.dw, hw::Cqe::kOwnerDword * sizeof(dw[0]));
  });
}

// A CQ doorbell with arm = 1 at consumer index `index` (8·count index space).
void cq_arm(Cq& cq, uint32_t index);

// Any CQ doorbell (arm or not) reporting consumer index `index`: what the CQ doorbell rule counts
// from; ends a stall.
void cq_doorbell_seen(Cq& cq, uint32_t index);

// The CQ doorbell rule (hw cq-doorbell; mana_en.c: "at least one doorbell ring every 8
// wraparounds of CQ"): whether `cq` may take `n` more CQEs for queue `q` now. A CQE that would put
// the producer 8·count or more past the index of the last CQ doorbell is a violation: `stall`
// stops the CQ until the next CQ doorbell, `error` fails the CQ and every queue that then needs
// it (marked dead). Counted in q's cq_doorbell_violations. Call before consuming the WQE.
bool cq_admits_slow(Cq& cq, WorkQueue& q, uint32_t n);
inline bool cq_admits(Cq& cq, WorkQueue& q, uint32_t n) {
  return cq.doorbell_rule == HwBehaviour::CqDoorbellRule::kOff || cq_admits_slow(cq, q, n);
}

}  // namespace mana::emu
