// SPDX-License-Identifier: BSD-3-Clause
// Receive WQs and their indirection tables on emulated contexts. A WQ is only a buffer and a CQ
// until an RSS QP over its table instantiates the hardware RQ. The uverbs core keeps use counts:
// a WQ named by a live table, and a table used by a live RSS QP, cannot be destroyed (EBUSY), so
// teardown goes QP, table, WQs (doc/emulator.md, "Open behaviours: control path").
#include <cerrno>

#include "verbs/buffer_sizing.h"
#include "verbs/queue_buffer.h"
#include "verbs/runtime.h"

using namespace mana::emu;
using namespace mana::emu::verbs;

namespace {

constexpr uint32_t kMaxIndTableLog = 16;  // the device checks the real limit (64 entries)

void free_wq(EmuContext* ctx, EmuWq* wq) {
  free_queue_buffer(ctx, wq->buf);
  delete wq;
}

ibv_wq* op_create_wq(ibv_context* context, ibv_wq_init_attr* attr) {
  EmuContext* ctx = emu(context);
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  if (attr->wq_type != IBV_WQT_RQ || attr->pd == nullptr || attr->pd->context != context ||
      attr->cq == nullptr || attr->cq->context != context || !has_allocators(ctx)) {
    return errno = EINVAL, nullptr;
  }
  if (!libmana_rq_ok(attr->max_wr, attr->max_sge, rt->libmana_max_wr())) {
    return errno = EINVAL, nullptr;
  }
  if (!rt->admit_queue(ctx, "RQ (WQ)", ctx->live_wqs)) return errno = EINVAL, nullptr;

  auto* wq = new EmuWq();
  wq->count = attr->max_wr;
  wq->buf_bytes = rq_buffer_size(attr->max_wr, attr->max_sge);
  wq->cq = emu(attr->cq);
  wq->buf = alloc_queue_buffer(ctx, wq->buf_bytes);
  if (wq->buf == nullptr) {
    free_wq(ctx, wq);
    return errno = ENOMEM, nullptr;
  }
  const int rc = ctx->device->create_wq(ctx->context_id, emu(attr->pd)->pd_id, wq->buf,
                                        static_cast<uint32_t>(wq->buf_bytes), attr->max_wr,
                                        attr->max_sge, wq->cq->handle, &wq->handle);
  if (rc != 0) {
    free_wq(ctx, wq);
    return errno = rc, nullptr;
  }
  // The inline ibv_create_wq fills wq_context, events_completed, mutex and cond.
  wq->ibv.context = context;
  wq->ibv.pd = attr->pd;
  wq->ibv.cq = attr->cq;
  wq->ibv.wq_num = wq->handle;
  wq->ibv.handle = wq->handle;
  wq->ibv.state = IBV_WQS_RESET;
  wq->ibv.wq_type = IBV_WQT_RQ;
  ++ctx->live_wqs;
  return &wq->ibv;
}

int op_destroy_wq(ibv_wq* wq) {
  EmuContext* ctx = emu(wq->context);
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  // ib_destroy_wq_user: wq->usecnt; not looked at on a disassociated context (EIO first).
  if (emu(wq)->table_entries != 0 && !ctx->device->context_disassociated(ctx->context_id))
    return EBUSY;
  rt->settle_doorbells();
  const int rc = destroy_result(ctx->device->destroy_wq(emu(wq)->handle));
  if (rc != 0) return rc;
  --ctx->live_wqs;
  free_wq(ctx, emu(wq));
  return 0;
}

ibv_rwq_ind_table* op_create_rwq_ind_table(ibv_context* context,
                                           ibv_rwq_ind_table_init_attr* attr) {
  if (attr->comp_mask != 0 || attr->log_ind_tbl_size > kMaxIndTableLog ||
      attr->ind_tbl == nullptr) {
    return errno = EINVAL, nullptr;
  }
  std::lock_guard<std::mutex> guard(Runtime::get()->lock());
  static uint32_t next_handle = 1;  // under the runtime lock
  auto* table = new EmuIndTable();
  table->log_size = attr->log_ind_tbl_size;
  const uint32_t entries = 1u << attr->log_ind_tbl_size;
  for (uint32_t i = 0; i < entries; ++i) {
    ibv_wq* wq = attr->ind_tbl[i];
    if (wq == nullptr || wq->context != context) {
      delete table;
      return errno = EINVAL, nullptr;
    }
    table->wqs.push_back(emu(wq));
  }
  for (EmuWq* wq : table->wqs) ++wq->table_entries;
  table->ibv.context = context;
  table->ibv.ind_tbl_handle = static_cast<int>(next_handle);
  table->ibv.ind_tbl_num = static_cast<int>(next_handle);
  ++next_handle;
  return &table->ibv;
}

int op_destroy_rwq_ind_table(ibv_rwq_ind_table* table) {
  std::lock_guard<std::mutex> guard(Runtime::get()->lock());
  EmuIndTable* t = emu(table);
  EmuContext* ctx = emu(table->context);
  if (ctx->device->context_disassociated(ctx->context_id)) {
    // uverbs answers EIO (the table went with the device); libibverbs frees its memory only when
    // allowed (destroy_result), else the call fails and the table stays.
    if (const int rc = destroy_result(EIO); rc != 0) return rc;
    delete t;  // its WQs may be gone already: after a removal objects go in any order
    return 0;
  }
  if (t->qps != 0) return EBUSY;  // uverbs_free_rwq_ind_tbl: rwq_ind_tbl->usecnt
  for (EmuWq* wq : t->wqs) --wq->table_entries;
  delete t;  // mana_ib keeps nothing for it
  return 0;
}

}  // namespace

namespace mana::emu::verbs {

void init_object_ops(EmuContext* ctx) {
  verbs_context& v = ctx->vctx;
  v.create_wq = &op_create_wq;
  v.destroy_wq = &op_destroy_wq;
  v.create_rwq_ind_table = &op_create_rwq_ind_table;
  v.destroy_rwq_ind_table = &op_destroy_rwq_ind_table;
  init_pd_ops(ctx);
  init_qp_ops(ctx);
}

}  // namespace mana::emu::verbs
