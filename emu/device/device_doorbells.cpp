// SPDX-License-Identifier: BSD-3-Clause
// Doorbells (doc/hardware.md §4.8): exact stores queued by `ring` (trap mode, tests) and, in poll
// mode, changes of the context pages' slots. Both feed `apply_doorbell`; the tail is absolute, so a
// doorbell only moves a queue's announced end of work.
#include <atomic>
#include <cstdio>

#include "device/cq_producer.h"
#include "device/device_impl.h"
#include "device/quiet_rounds.h"

namespace mana::emu {

void DeviceImpl::ring(uint32_t context_id, uint32_t offset, uint64_t value) {
  const DoorbellStore store{context_id, offset, value};
  while (!doorbells_.push(store)) {
    // Full: drain it here rather than lose a store (doorbells only update queue state).
    std::lock_guard g(lock_);
    drain_doorbells();
  }
}

unsigned DeviceImpl::drain_doorbells() {
  unsigned n = 0;
  DoorbellStore s;
  while (doorbells_.pop(&s)) {
    apply_doorbell(s.context_id, s.offset, s.value);
    note_rung(s);
    ++n;
  }
  return n;
}

// A held page (poll mode, stores trapped for now): the slot's last value, for the release.
void DeviceImpl::note_rung(const DoorbellStore& s) {
  if (!poll_doorbells_.load(std::memory_order_relaxed)) return;
  Context* ctx = find_context(s.context_id);
  if (ctx == nullptr || !ctx->held) return;
  for (unsigned i = 0; i < ctx->last_sampled.size(); ++i)
    if (kDoorbellSlots[i] == s.offset) ctx->last_sampled[i] = s.value;
}

void DeviceImpl::hold_doorbell_page(uint32_t context_id) {
  std::lock_guard g(lock_);
  Context* ctx = find_context(context_id);
  if (ctx == nullptr || ctx->held) return;
  // Stores made before the hold reach the device before the ones trapped after it (§4.8).
  sample_doorbell_pages();
  ctx->held = true;
}

void DeviceImpl::release_doorbell_page(uint32_t context_id) {
  std::lock_guard g(lock_);
  Context* ctx = find_context(context_id);
  if (ctx == nullptr || !ctx->held || ctx->page == nullptr) return;
  drain_doorbells();  // the trapped stores the device thread handed over, their values noted
  for (unsigned i = 0; i < ctx->last_sampled.size(); ++i)
    std::atomic_ref<uint64_t>(
        const_cast<uint64_t&>(ctx->page[kDoorbellSlots[i] / sizeof(uint64_t)]))
        .store(ctx->last_sampled[i], std::memory_order_relaxed);
  ctx->held = false;
}

// Rounds until one sees no slot change (doc/hardware.md §4.8, "Order across queues"): a slot read
// late may show a doorbell stored after one that a slot read earlier does not show yet. A
// driver's store to a slot comes once per burst, so a round that finds none is the rule; the bound
// keeps a driver storing without pause from holding the device thread here.
unsigned DeviceImpl::sample_doorbell_pages() {
  constexpr unsigned kMaxRounds = 64;
  return rounds_until_quiet(kMaxRounds, [this] { return sample_doorbell_pages_once(); });
}

unsigned DeviceImpl::sample_doorbell_pages_once() {
  unsigned n = 0;
  for (Context* ctx : context_list_) {
    if (ctx->held) continue;  // its stores come trapped, its page is stale
    for (unsigned s = 0; s < ctx->last_sampled.size(); ++s) {
      // Acquire: the driver wrote its WQEs before the doorbell; read them only after seeing it.
      const uint64_t v = std::atomic_ref<uint64_t>(
                             const_cast<uint64_t&>(ctx->page[kDoorbellSlots[s] / sizeof(uint64_t)]))
                             .load(std::memory_order_acquire);
      if (v == ctx->last_sampled[s]) continue;
      ctx->last_sampled[s] = v;
      apply_doorbell(ctx->id, kDoorbellSlots[s], v);
      ++n;
    }
  }
  return n;
}

// A doorbell is a posted MMIO write (doc/hardware.md §4.8) that the driver issued before its
// destroy call, so the NIC sees it before the destroy command: the queue takes it, then goes away.
// Without this a doorbell still queued here (or, polled, still unsampled) would name a dead queue.
void DeviceImpl::settle_doorbells() {
  drain_doorbells();
  if (poll_doorbells_.load(std::memory_order_relaxed)) sample_doorbell_pages();
}

WorkQueue* DeviceImpl::doorbell_queue(uint32_t context_id, uint64_t value, QueueKind kind) {
  QueueBase* q = queue_ids_.find(hw::doorbell_queue_id(value));
  if (q == nullptr || q->kind != kind || q->context_id != context_id) return nullptr;
  return static_cast<WorkQueue*>(q);
}

void DeviceImpl::apply_doorbell(uint32_t context_id, uint32_t offset, uint64_t value) {
  // A store into the page of a hot-removed function reaches no hardware.
  if (const Context* c = find_context(context_id); c != nullptr && c->disassociated) return;
  bool ok = false;
  if (offset == hw::kSqDoorbellOffset || offset == hw::kRqDoorbellOffset) {
    const bool rq = offset == hw::kRqDoorbellOffset;
    WorkQueue* q = doorbell_queue(context_id, value, rq ? QueueKind::kRq : QueueKind::kSq);
    const uint32_t tail_bu = (hw::doorbell_wq_tail(value) / hw::kBasicUnit) & kBuMask;
    // The announced work may not exceed the ring (doc/hardware.md §6.4).
    if (q != nullptr && ((tail_bu - q->consumed_bu) & kBuMask) <= q->size_bu()) {
      q->tail_bu = tail_bu;
      ++q->counters.doorbells;
      ok = true;
      if (rq && hw::doorbell_wqe_cnt(value) != 0) {
        ++q->counters.wqe_cnt_doorbells;
        Rq* r = static_cast<Rq*>(q);
        if (!r->warned_wqe_cnt) {
          r->warned_wqe_cnt = true;
          std::fprintf(stderr, "mana-emu: RQ 0x%x doorbell with wqe_cnt %u (must be 0), accepted\n",
                       q->id, hw::doorbell_wqe_cnt(value));
        }
      }
    }
  } else if (offset == hw::kCqDoorbellOffset) {
    QueueBase* q = queue_ids_.find(hw::doorbell_queue_id(value));
    if (q != nullptr && q->kind == QueueKind::kCq && q->context_id == context_id) {
      ok = true;
      Cq* cq = static_cast<Cq*>(q);
      if (!cq->dead) {
        cq_doorbell_seen(*cq, hw::doorbell_cq_tail(value));
        if (hw::doorbell_cq_arm(value)) cq_arm(*cq, hw::doorbell_cq_tail(value));
      }
    }
  }
  if (ok) return;
  ++bad_doorbells_;
  if (!warned_bad_doorbell_) {
    warned_bad_doorbell_ = true;
    std::fprintf(stderr,
                 "mana-emu: ignored doorbell 0x%016llx at offset 0x%x of context %u (no such "
                 "queue in the context, or beyond the ring)\n",
                 static_cast<unsigned long long>(value), offset, context_id);
  }
}

unsigned DeviceImpl::poll() {
  std::lock_guard g(lock_);
  unsigned work = drain_doorbells();
  if (poll_doorbells_.load(std::memory_order_relaxed)) work += sample_doorbell_pages();
  if (!present_.load(std::memory_order_relaxed)) return work;
  for (Sq* sq : sqs_)
    if (!sq->dead && !sq->stalled && sq->pending_bu() != 0) work += process_sq(*sq, kTxBudget);
  for (Port& port : ports_) work += receive_port(port, kRxBudget);
  flush_all_coalesced();
  return work;
}

}  // namespace mana::emu
