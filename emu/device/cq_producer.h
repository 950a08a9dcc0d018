// The producer side of a CQ (spec §4.5, §4.8): owner bits across wraps, data-then-owner write
// order, and one-shot arming that signals the CQ's completion channel.
#pragma once

#include "device/objects.h"

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

// Writes `cqe` (dw0..dw14 filled by the caller; dw15 is built here from `wq_id` and `is_sq`) into
// the next slot. Signals the completion channel when armed.
void cq_post(Cq& cq, const hw::Cqe& cqe, uint32_t wq_id, bool is_sq);

// A CQ doorbell with arm = 1 at consumer index `index` (8·count index space).
void cq_arm(Cq& cq, uint32_t index);

}  // namespace mana::emu
