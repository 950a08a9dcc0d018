#include "device/cq_producer.h"

#include <unistd.h>

#include <atomic>

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
  cq.index8 = cq.count;  // the consumer's head starts at count (spec §4.5)
  cq.armed = false;
}

void cq_post(Cq& cq, const hw::Cqe& cqe, uint32_t wq_id, bool is_sq) {
  hw::Cqe& dst = cq.ring[cq.slot];
  for (unsigned i = 0; i < hw::Cqe::kOwnerDword; ++i) dst.dw[i] = cqe.dw[i];
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

}  // namespace mana::emu
