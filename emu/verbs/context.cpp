// SPDX-License-Identifier: BSD-3-Clause
// ibv_open_device / ibv_close_device, device and port attributes, async events and
// manadv_set_context_attr for emulated contexts.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "doorbell/trap.h"
#include "verbs/cmd_fd.h"
#include "verbs/exports.h"
#include "verbs/held_doorbells.h"
#include "verbs/real_verbs.h"
#include "verbs/runtime.h"

#undef ibv_query_port

using namespace mana::emu;
using namespace mana::emu::verbs;

namespace {

// libmana leaves the generic data-path ops unsupported: RAW queues are driven directly.
int unsupported_poll_cq(ibv_cq*, int, ibv_wc*) { return -EOPNOTSUPP; }
int unsupported_req_notify_cq(ibv_cq*, int) { return EOPNOTSUPP; }
int unsupported_post_send(ibv_qp*, ibv_send_wr*, ibv_send_wr**) { return EOPNOTSUPP; }
int unsupported_post_recv(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**) { return EOPNOTSUPP; }
int unsupported_post_srq_recv(ibv_srq*, ibv_recv_wr*, ibv_recv_wr**) { return EOPNOTSUPP; }

const DeviceLimits& limits_of_ctx(EmuContext* ctx) { return ctx->vf->config.limits; }

void fill_device_attr(EmuContext* ctx, ibv_device_attr* a) {
  const DeviceLimits& l = limits_of_ctx(ctx);
  *a = ibv_device_attr{};
  snprintf(a->fw_ver, sizeof(a->fw_ver), "0.1.0");
  a->max_mr_size = l.max_mr_size;
  a->page_size_cap = 0xFFFFF000;  // 4 KiB and up
  a->vendor_id = 0x1414;
  a->vendor_part_id = ctx->dev->vendor_part_id;
  a->max_qp = static_cast<int>(l.max_qp);
  a->max_qp_wr = static_cast<int>(l.max_qp_wr);
  // uverbs reports max_sge = min(send, recv) (doc/hardware.md §6.1).
  a->max_sge = static_cast<int>(std::min(l.max_send_sge, l.max_recv_sge));
  a->max_cq = static_cast<int>(l.max_qp);
  a->max_cqe = static_cast<int>(l.max_cqe);
  a->max_mr = static_cast<int>(l.max_mr);
  a->max_pd = static_cast<int>(l.max_qp);
  a->phys_port_cnt = static_cast<uint8_t>(ctx->dev->port_count);
}

int op_query_device_ex(ibv_context* context, const ibv_query_device_ex_input* input,
                       ibv_device_attr_ex* attr, size_t attr_size) {
  if (input != nullptr && input->comp_mask != 0) return EINVAL;
  EmuContext* ctx = emu(context);
  ibv_device_attr_ex full{};
  fill_device_attr(ctx, &full.orig_attr);
  full.raw_packet_caps = ctx->dev->raw_packet_caps;
  memcpy(attr, &full, std::min(attr_size, sizeof(full)));
  return 0;
}

void fill_port_attr(EmuContext* ctx, ibv_port_attr* p) {
  *p = ibv_port_attr{};
  p->state = IBV_PORT_ACTIVE;
  p->max_mtu = IBV_MTU_4096;
  p->active_mtu = IBV_MTU_1024;  // an Ethernet MTU of 1500
  p->gid_tbl_len = 16;
  p->max_msg_sz = 0x40000000;
  p->pkey_tbl_len = 1;
  p->active_width = 1;   // 1x
  p->active_speed = 64;  // EDR-class rate, informational only
  p->phys_state = 5;     // LinkUp
  p->link_layer = IBV_LINK_LAYER_ETHERNET;
  (void)ctx;
}

int op_query_port(ibv_context* context, uint8_t port, ibv_port_attr* attr, size_t attr_len) {
  EmuContext* ctx = emu(context);
  if (port < 1 || port > ctx->dev->port_count) return EINVAL;
  ibv_port_attr full;
  fill_port_attr(ctx, &full);
  memcpy(attr, &full, std::min(attr_len, sizeof(full)));
  return 0;
}

unsigned next_context_serial() {
  static unsigned serial = 0;  // under the runtime lock
  return serial++;
}

// Maps the doorbell page (read-only in trap mode) and the header/FIFO pages. Returns an errno
// value.
int map_doorbells(EmuContext* ctx, bool poll) {
  const int fd = ctx->vctx.context.cmd_fd;
  ctx->db_page = map_doorbell_page(fd, poll);
  ctx->cmd_map = map_cmd_region(fd);
  if (ctx->db_page == nullptr || ctx->cmd_map == nullptr) return ENOENT;  // as libmana
  return 0;
}

// Publishes the context in the cmd_fd header and, in trap mode, starts trapping its stores.
int arm_doorbells(EmuContext* ctx, bool poll) {
  CmdFdHeader* header = cmd_header(ctx->cmd_map);
  header->context_id = ctx->context_id;
  header->trap = poll ? 0 : 1;
  header->magic = kCmdFdMagic;
  if (poll) return Runtime::get()->lockstep_poll() ? held_doorbells_open(ctx) : 0;
  auto* fifo = doorbell::DoorbellFifo::init(cmd_fifo_memory(ctx->cmd_map), kCmdFifoCapacity);
  if (fifo == nullptr) return ENOMEM;
  if (!Runtime::get()->thread().add_fifo(ctx->device, fifo)) return ENOSPC;
  int rc = doorbell::trap_register(const_cast<uint64_t*>(ctx->db_page), ctx->context_id, fifo);
  if (rc != 0) {
    Runtime::get()->thread().remove_fifo(fifo);
    header->trap = 0;
  }
  return rc;
}

// Stops trapping and hands every doorbell still in the FIFO to the device (before it forgets the
// context). Idempotent.
void stop_trapping(EmuContext* ctx) {
  if (ctx->cmd_map != nullptr && cmd_header(ctx->cmd_map)->trap != 0) {
    doorbell::trap_unregister(const_cast<uint64_t*>(ctx->db_page));
    Runtime::get()->thread().remove_fifo(
        doorbell::DoorbellFifo::attach(cmd_fifo_memory(ctx->cmd_map)));
    cmd_header(ctx->cmd_map)->trap = 0;
  }
}

void teardown_doorbells(EmuContext* ctx) {
  held_doorbells_close(ctx);
  stop_trapping(ctx);
  unmap_doorbell_page(ctx->db_page);
  unmap_cmd_region(ctx->cmd_map);
}

void free_context(EmuContext* ctx) {
  teardown_doorbells(ctx);
  if (ctx->vctx.context.cmd_fd >= 0) close(ctx->vctx.context.cmd_fd);
  if (ctx->vctx.context.async_fd >= 0) close(ctx->vctx.context.async_fd);
  pthread_mutex_destroy(&ctx->vctx.context.mutex);
  delete ctx;
}

ibv_context* open_emu_device(EmuDevice* dev) {
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  if (!rt->vf_listed(dev->vf)) {
    errno = ENODEV;
    return nullptr;
  }
  VfRuntime& vf = rt->vf(dev->vf);
  Device* device = nullptr;
  int rc = rt->acquire_device(vf, &device);
  // Another process runs this VF's device model. The kernel lets any process open the device (DPDK
  // 24.11's net_mana does so in secondaries, to query it); here such a context can query and close,
  // and refuses to create objects (alloc_pd, create_cq) with one line saying why.
  const bool query_only = rc == EBUSY;
  if (rc != 0 && !query_only) {
    errno = rc;
    return nullptr;
  }
  auto* ctx = new EmuContext();
  ibv_context& c = ctx->vctx.context;
  c.device = &dev->ibv;
  c.cmd_fd = -1;
  c.async_fd = -1;
  c.num_comp_vectors = 1;
  pthread_mutex_init(&c.mutex, nullptr);
  c.abi_compat = reinterpret_cast<void*>(UINTPTR_MAX);  // extended verbs_context layout
  ctx->vctx.sz = sizeof(verbs_context);
  ctx->dev = dev;
  ctx->vf = &vf;
  ctx->device = device;
  init_context_ops(ctx);

  c.async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  if (query_only) {
    if (c.async_fd < 0) {
      rc = errno;
      free_context(ctx);
      return errno = rc, nullptr;
    }
    return &c;
  }
  c.cmd_fd = create_cmd_fd(dev->vf, next_context_serial());
  if (c.cmd_fd < 0 || c.async_fd < 0) {
    rc = errno;
    free_context(ctx);
    errno = rc;
    return nullptr;
  }
  rc = map_doorbells(ctx, rt->poll_doorbells());
  if (rc == 0) rc = device->open_context(ctx->db_page, &ctx->context_id);
  if (rc != 0) {
    free_context(ctx);
    errno = rc;
    return nullptr;
  }
  rc = arm_doorbells(ctx, rt->poll_doorbells());
  if (rc != 0) {
    device->close_context(ctx->context_id);
    free_context(ctx);
    errno = rc;
    return nullptr;
  }
  rt->context_opened(ctx);
  return &c;
}

}  // namespace

namespace mana::emu::verbs {

bool refuse_query_only(const EmuContext* ctx) {
  if (ctx->device != nullptr) return false;
  fprintf(stderr,
          "mana-emu: VF %s is run by another process: a context opened here can query the device "
          "but not create objects (doc/emulator.md)\n",
          ctx->vf->config.pci_addr.c_str());
  errno = EOPNOTSUPP;
  return true;
}

bool is_emu_context(const ibv_context* ctx) {
  return ctx != nullptr && ctx->ops.post_srq_recv == &unsupported_post_srq_recv;
}

void init_context_ops(EmuContext* ctx) {
  ibv_context_ops& ops = ctx->vctx.context.ops;
  ops.poll_cq = &unsupported_poll_cq;
  ops.req_notify_cq = &unsupported_req_notify_cq;
  ops.post_send = &unsupported_post_send;
  ops.post_recv = &unsupported_post_recv;
  ops.post_srq_recv = &unsupported_post_srq_recv;  // also the "emulated context" marker
  verbs_context& v = ctx->vctx;
  v.query_device_ex = &op_query_device_ex;
  v.query_port = &op_query_port;
  init_object_ops(ctx);
}

}  // namespace mana::emu::verbs

MANA_EMU_EXPORT ibv_context* ibv_open_device(ibv_device* device) {
  if (!is_emu_device(device)) {
    static const auto real = next_symbol<decltype(&ibv_open_device)>("ibv_open_device", kIbverbs11);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(device);
  }
  return open_emu_device(emu(device));
}

MANA_EMU_EXPORT int ibv_close_device(ibv_context* context) {
  if (!is_emu_context(context)) {
    static const auto real =
        next_symbol<decltype(&ibv_close_device)>("ibv_close_device", kIbverbs11);
    return real == nullptr ? ENOSYS : real(context);
  }
  EmuContext* ctx = emu(context);
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  if (ctx->device != nullptr) {
    rt->context_closed(ctx);
    stop_trapping(ctx);
    ctx->device->close_context(ctx->context_id);
  }
  free_context(ctx);
  return 0;
}

MANA_EMU_EXPORT int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  if (!is_emu_context(context)) {
    static const auto real =
        next_symbol<decltype(&ibv_query_device)>("ibv_query_device", kIbverbs11);
    return real == nullptr ? ENOSYS : real(context, attr);
  }
  fill_device_attr(emu(context), attr);
  return 0;
}

// The exported (legacy) entry point; verbs.h's inline ibv_query_port uses the op instead.
MANA_EMU_EXPORT int ibv_query_port(ibv_context* context, uint8_t port,
                                   _compat_ibv_port_attr* attr) {
  if (!is_emu_context(context)) {
    static const auto real = next_symbol<decltype(&ibv_query_port)>("ibv_query_port", kIbverbs11);
    return real == nullptr ? ENOSYS : real(context, port, attr);
  }
  // The compat struct is the leading part of ibv_port_attr (up to link_layer and flags).
  EmuContext* ctx = emu(context);
  if (port < 1 || port > ctx->dev->port_count) return EINVAL;
  ibv_port_attr full;
  fill_port_attr(ctx, &full);
  memcpy(static_cast<void*>(attr), &full, offsetof(ibv_port_attr, port_cap_flags2));
  return 0;
}

MANA_EMU_EXPORT int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  if (!is_emu_context(context)) {
    static const auto real =
        next_symbol<decltype(&ibv_get_async_event)>("ibv_get_async_event", kIbverbs11);
    if (real == nullptr) return errno = ENOSYS, -1;
    return real(context, event);
  }
  EmuContext* ctx = emu(context);
  // The semaphore eventfd counts queued events; its O_NONBLOCK flag (DPDK sets it) gives EAGAIN.
  uint64_t one;
  if (read(context->async_fd, &one, sizeof(one)) != sizeof(one)) return -1;
  std::lock_guard<std::mutex> guard(ctx->async_lock);
  if (ctx->async_events.empty()) return errno = EAGAIN, -1;
  *event = ctx->async_events.front();
  ctx->async_events.pop_front();
  return 0;
}

// Emulated contexts raise only device-level events, which need no accounting; the real function
// handles those and every object event generically.
MANA_EMU_EXPORT void ibv_ack_async_event(ibv_async_event* event) {
  static const auto real =
      next_symbol<decltype(&ibv_ack_async_event)>("ibv_ack_async_event", kIbverbs11);
  if (real != nullptr) real(event);
}

MANA_EMU_EXPORT int manadv_set_context_attr(ibv_context* context, manadv_set_ctx_attr_type type,
                                            void* attr) {
  if (!is_emu_context(context)) {
    static const auto real =
        next_symbol<decltype(&manadv_set_context_attr)>("manadv_set_context_attr", kMana10);
    return real == nullptr ? ENOSYS : real(context, type, attr);
  }
  if (type != MANADV_CTX_ATTR_BUF_ALLOCATORS) return EOPNOTSUPP;
  EmuContext* ctx = emu(context);
  std::lock_guard<std::mutex> guard(Runtime::get()->lock());
  ctx->allocators = *static_cast<const manadv_ctx_allocators*>(attr);  // copied, as libmana
  return 0;
}
