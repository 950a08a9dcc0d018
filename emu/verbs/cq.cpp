// SPDX-License-Identifier: BSD-3-Clause
// Completion queues and completion channels of emulated contexts. A channel's fd is an epoll set
// over one eventfd per CQ (the device writes the CQ's eventfd when an armed CQ completes), so
// ibv_get_cq_event knows which CQ fired and the channel fd is pollable like the kernel's.
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "verbs/buffer_sizing.h"
#include "verbs/exports.h"
#include "verbs/libmana_rules.h"
#include "verbs/queue_buffer.h"
#include "verbs/real_verbs.h"
#include "verbs/runtime.h"

using namespace mana::emu;
using namespace mana::emu::verbs;

namespace {

void release_event_fd(EmuCq* cq) {
  if (cq->event_fd < 0) return;
  epoll_ctl(cq->ibv.channel->fd, EPOLL_CTL_DEL, cq->event_fd, nullptr);
  close(cq->event_fd);
  cq->event_fd = -1;
}

// An RNIC CQ's buffer: libmana's own anonymous mapping (mana_alloc_mem), not the application's.
void* map_rnic_buffer(uint64_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void free_cq(EmuContext* ctx, EmuCq* cq) {
  release_event_fd(cq);
  if (cq->ibv.channel != nullptr) --cq->ibv.channel->refcnt;
  if (cq->rnic && cq->buf != nullptr)
    munmap(cq->buf, cq->buf_bytes);
  else if (!cq->rnic)
    free_queue_buffer(ctx, cq->buf);
  pthread_cond_destroy(&cq->ibv.cond);
  pthread_mutex_destroy(&cq->ibv.mutex);
  delete cq;
}

ibv_cq* create_emu_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel) {
  if (refuse_query_only(emu(context))) return nullptr;
  EmuContext* ctx = emu(context);
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  // hw libmana-cq-rule: without allocators, EINVAL (v44) or an RDMA CQ (v53, v62).
  const CqKind kind = cq_kind(rt->libmana_cq_rule(), has_allocators(ctx));
  if (cqe < 1 || kind == CqKind::kRefused) return errno = EINVAL, nullptr;
  const auto count = static_cast<uint32_t>(cqe);
  if (!libmana_cq_ok(count, rt->libmana_max_wr())) return errno = EINVAL, nullptr;
  if (channel != nullptr && channel->context != context) return errno = EINVAL, nullptr;

  auto* cq = new EmuCq();
  cq->ibv.context = context;
  cq->ibv.channel = channel;
  cq->ibv.cq_context = cq_context;
  cq->ibv.cqe = cqe;
  pthread_mutex_init(&cq->ibv.mutex, nullptr);
  pthread_cond_init(&cq->ibv.cond, nullptr);
  cq->rnic = kind == CqKind::kRnic;
  cq->count = cq->rnic ? rnic_cq_count(count) : count;
  cq->buf_bytes = cq_buffer_size(count);
  if (channel != nullptr) {
    ++channel->refcnt;
    cq->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = cq;
    if (cq->event_fd < 0 || epoll_ctl(channel->fd, EPOLL_CTL_ADD, cq->event_fd, &ev) != 0) {
      const int rc = errno;
      free_cq(ctx, cq);
      return errno = rc, nullptr;
    }
  }
  cq->buf = cq->rnic ? map_rnic_buffer(cq->buf_bytes) : alloc_queue_buffer(ctx, cq->buf_bytes);
  if (cq->buf == nullptr) {
    free_cq(ctx, cq);
    return errno = ENOMEM, nullptr;
  }
  const int rc = ctx->device->create_cq(ctx->context_id, cq->buf, count, cq->event_fd, &cq->handle);
  if (rc != 0) {
    free_cq(ctx, cq);
    return errno = rc, nullptr;
  }
  cq->ibv.handle = cq->handle;
  // An RNIC CQ gets its id from the kernel at creation; an Ethernet CQ from its first QP.
  cq->cq_id = cq->rnic ? cq->handle : unbound_cq_id(rt->libmana_cq_rule());
  return &cq->ibv;
}

}  // namespace

MANA_EMU_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  if (!is_emu_context(context)) {
    static const auto real =
        next_symbol<decltype(&ibv_create_comp_channel)>("ibv_create_comp_channel", kIbverbs10);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(context);
  }
  const int fd = epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) return nullptr;
  auto* ch = new EmuChannel();
  ch->ibv.context = context;
  ch->ibv.fd = fd;
  ch->ibv.refcnt = 0;
  return &ch->ibv;
}

MANA_EMU_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  if (!is_emu_context(channel->context)) {
    static const auto real =
        next_symbol<decltype(&ibv_destroy_comp_channel)>("ibv_destroy_comp_channel", kIbverbs10);
    return real == nullptr ? ENOSYS : real(channel);
  }
  {
    std::lock_guard<std::mutex> guard(Runtime::get()->lock());
    if (channel->refcnt != 0) return EBUSY;  // CQs still use it
  }
  close(channel->fd);
  delete emu(channel);
  return 0;
}

MANA_EMU_EXPORT ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context,
                                      ibv_comp_channel* channel, int comp_vector) {
  if (!is_emu_context(context)) {
    static const auto real = next_symbol<decltype(&ibv_create_cq)>("ibv_create_cq", kIbverbs11);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(context, cqe, cq_context, channel, comp_vector);
  }
  return create_emu_cq(context, cqe, cq_context, channel);
}

MANA_EMU_EXPORT int ibv_destroy_cq(ibv_cq* cq) {
  if (!is_emu_context(cq->context)) {
    static const auto real = next_symbol<decltype(&ibv_destroy_cq)>("ibv_destroy_cq", kIbverbs11);
    return real == nullptr ? ENOSYS : real(cq);
  }
  EmuContext* ctx = emu(cq->context);
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  rt->settle_doorbells();
  const int rc = destroy_result(ctx->device->destroy_cq(emu(cq)->handle));
  if (rc != 0) return rc;  // EBUSY while a queue is bound to it
  free_cq(ctx, emu(cq));
  return 0;
}

MANA_EMU_EXPORT int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  if (!is_emu_context(channel->context)) {
    static const auto real =
        next_symbol<decltype(&ibv_get_cq_event)>("ibv_get_cq_event", kIbverbs11);
    if (real == nullptr) return errno = ENOSYS, -1;
    return real(channel, cq, cq_context);
  }
  // Blocks like a read of the kernel's channel fd unless the application made it non-blocking.
  const bool nonblocking = (fcntl(channel->fd, F_GETFL) & O_NONBLOCK) != 0;
  for (;;) {
    epoll_event ev{};
    const int n = epoll_wait(channel->fd, &ev, 1, nonblocking ? 0 : -1);
    if (n < 0 && errno == EINTR && !nonblocking) continue;
    if (n < 0) return -1;
    if (n == 0) return errno = EAGAIN, -1;
    auto* fired = static_cast<EmuCq*>(ev.data.ptr);
    uint64_t count;
    if (read(fired->event_fd, &count, sizeof(count)) != sizeof(count)) {
      if (nonblocking) return errno = EAGAIN, -1;
      continue;  // drained by a concurrent caller
    }
    *cq = &fired->ibv;
    *cq_context = fired->ibv.cq_context;
    return 0;
  }
}

MANA_EMU_EXPORT void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  if (!is_emu_context(cq->context)) {
    static const auto real =
        next_symbol<decltype(&ibv_ack_cq_events)>("ibv_ack_cq_events", kIbverbs11);
    if (real != nullptr) real(cq, nevents);
    return;
  }
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}
