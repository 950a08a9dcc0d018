// SPDX-License-Identifier: BSD-3-Clause
// hw rx-steering-on-destroy=keep: kernels without dbeb256e8dd8 destroy an RSS QP's RQ objects but
// leave the vPort's RX steering at them (doc/hardware.md §9.22). Frames that arrive then are
// steered to queues that no longer exist: lost, unless a CQ created since took one of the stale CQ
// ids (the kernel's report: the Ethernet driver's new TX CQs), which then gets an RX completion for
// a queue it does not serve. The steering stays until an RSS QP or the kernel netdev programs it.
#include "device/cq_producer.h"
#include "device/device_impl.h"

namespace mana::emu {

void DeviceImpl::keep_stale_steering(Port& port, RssQp& rss) {
  StaleSteering& s = port.stale;
  s.active = true;
  s.hashes = rss.hashes;
  for (uint32_t i = 0; i < hw::kRssTableSize; ++i) {
    const Rq* rq = port.steering[i];
    s.cq_ids[i] = rq != nullptr && rq->cq != nullptr ? rq->cq->id : 0;
    s.rq_ids[i] = rq != nullptr ? rq->id : 0;
  }
  const Rq* d = port.default_rq;
  s.default_cq_id = d != nullptr && d->cq != nullptr ? d->cq->id : 0;
  s.default_rq_id = d != nullptr ? d->id : 0;
  s.hasher = std::move(rss.hasher);
}

void DeviceImpl::end_stale_steering(Port& port) {
  port.stale.active = false;
  port.stale.hasher.reset();
}

// The entry the destroyed QP's steering picks for the frame, and what became of its CQ id.
void DeviceImpl::route_stale_frame(Port& port, const uint8_t* frame, uint32_t len) {
  StaleSteering& s = port.stale;
  uint32_t cq_id = s.default_cq_id;
  uint32_t rq_id = s.default_rq_id;
  uint32_t hash = 0;
  FrameInfo info;
  parse_frame(frame, len, &info);
  if (s.hashes && s.hasher != nullptr) {
    const RssInput input = rss_input(frame, info);
    if (input.hash_type != 0) {
      hash = s.hasher->hash(input.bytes, input.len);
      cq_id = s.cq_ids[hash & (hw::kRssTableSize - 1)];
      rq_id = s.rq_ids[hash & (hw::kRssTableSize - 1)];
    }
  }
  QueueBase* q = cq_id != 0 ? queue_ids_.find(cq_id) : nullptr;
  if (q == nullptr || q->kind != QueueKind::kCq || q->dead) {
    ++port.counters.rx_stale_steering_drops;
    return;
  }
  // The NIC completes the frame for the destroyed RQ: an RX CQE naming that RQ, no buffer.
  hw::Cqe cqe{};
  cqe.dw[0] = cqe_header({hw::kCqeRxOkay});
  cqe.rx_packet(0) = hw::RxPacketInfo{hw::RxPacketInfo::Length::set(0, len), 0, hash};
  cq_post(*static_cast<Cq*>(q), cqe, rq_id, false);
  ++port.counters.rx_stale_steering_cqes;
}

// A TX CQ created while the steering is stale takes a stale CQ id when one is free: the ids the
// hardware reuses (worst case, deterministic for tests).
bool DeviceImpl::bind_cq_to_stale_id(Port& port, Cq& cq) {
  if (!port.stale.active) return false;
  for (uint32_t id : port.stale.cq_ids) {
    if (id != 0 && queue_ids_.insert_as(id, &cq)) {
      cq.id = id;
      return true;
    }
  }
  return false;
}

}  // namespace mana::emu
