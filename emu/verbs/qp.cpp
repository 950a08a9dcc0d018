// SPDX-License-Identifier: BSD-3-Clause
// Raw packet QPs (one SQ on an IB port of the parent domain) and RSS QPs (an indirection table of
// WQs) of emulated contexts.
#include <cerrno>

#include "verbs/buffer_sizing.h"
#include "verbs/exports.h"
#include "verbs/queue_buffer.h"
#include "verbs/real_verbs.h"
#include "verbs/runtime.h"

using namespace mana::emu;
using namespace mana::emu::verbs;

namespace {

constexpr uint32_t kMaxRssKeyBytes = 40;
constexpr unsigned kSteeringEntries = 64;

// DPDK passes the IB port as the parent domain's pd_context.
uint32_t port_of(const EmuPd* pd) {
  return pd->parent ? static_cast<uint32_t>(reinterpret_cast<uintptr_t>(pd->pd_context)) : 0;
}

void init_qp(EmuQp* qp, ibv_context* context, ibv_pd* pd, ibv_qp_type type, void* qp_context,
             ibv_cq* send_cq, ibv_cq* recv_cq) {
  qp->ibv.context = context;
  qp->ibv.qp_context = qp_context;
  qp->ibv.pd = pd;
  qp->ibv.send_cq = send_cq;
  qp->ibv.recv_cq = recv_cq;
  qp->ibv.qp_type = type;
  qp->ibv.state = IBV_QPS_RESET;
  pthread_mutex_init(&qp->ibv.mutex, nullptr);
  pthread_cond_init(&qp->ibv.cond, nullptr);
}

void free_qp(EmuContext* ctx, EmuQp* qp) {
  free_queue_buffer(ctx, qp->sq_buf);
  pthread_cond_destroy(&qp->ibv.cond);
  pthread_mutex_destroy(&qp->ibv.mutex);
  delete qp;
}

ibv_qp* create_raw_qp(ibv_context* context, ibv_pd* pd, const ibv_qp_init_attr& attr) {
  EmuContext* ctx = emu(context);
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  if (attr.qp_type != IBV_QPT_RAW_PACKET) return errno = EOPNOTSUPP, nullptr;
  if (ctx->dev->rnic) return errno = EOPNOTSUPP, nullptr;  // the RNIC device has no raw QPs
  if (pd == nullptr || pd->context != context || attr.send_cq == nullptr ||
      attr.send_cq->context != context) {
    return errno = EINVAL, nullptr;
  }
  const EmuPd* ppd = emu(pd);
  const uint32_t wr = attr.cap.max_send_wr;
  const uint32_t sge = attr.cap.max_send_sge;
  if (!has_allocators(ctx) || !ppd->parent) return errno = EINVAL, nullptr;
  if (!libmana_sq_ok(wr, sge, rt->libmana_max_wr())) return errno = EINVAL, nullptr;
  if (!rt->admit_queue(ctx, "SQ (raw QP)", ctx->live_sqs)) return errno = EINVAL, nullptr;

  auto* qp = new EmuQp();
  init_qp(qp, context, pd, IBV_QPT_RAW_PACKET, attr.qp_context, attr.send_cq, attr.recv_cq);
  qp->sq_bytes = sq_buffer_size(wr, sge);
  qp->sq_count = wr;
  qp->sq_buf = alloc_queue_buffer(ctx, qp->sq_bytes);
  if (qp->sq_buf == nullptr) {
    free_qp(ctx, qp);
    return errno = ENOMEM, nullptr;
  }
  EmuCq* cq = emu(attr.send_cq);
  // The kernel hands the NIC the CQ's DMA region, which an RNIC CQ gave away at creation: the
  // SQ object is refused (mana_create_wq_obj: EPROTO; doc/hardware.md §9.21).
  if (cq->rnic) {
    free_qp(ctx, qp);
    return errno = EPROTO, nullptr;
  }
  SqBinding binding{};
  const int rc = ctx->device->create_raw_qp(ctx->context_id, ppd->pd_id, port_of(ppd), qp->sq_buf,
                                            static_cast<uint32_t>(qp->sq_bytes), wr, sge,
                                            cq->handle, &binding, &qp->handle);
  if (rc != 0) {
    free_qp(ctx, qp);
    return errno = rc, nullptr;
  }
  qp->sq_id = binding.sq_id;
  qp->tx_vp_offset = binding.tx_vp_offset;
  cq->cq_id = binding.cq_id;
  qp->ibv.handle = qp->handle;
  qp->ibv.qp_num = binding.sq_id;
  ++ctx->live_sqs;
  track_id(ctx->vf->sq_ids, qp->sq_id);
  return &qp->ibv;
}

ibv_qp* create_rss_qp(ibv_context* context, ibv_qp_init_attr_ex* attr) {
  EmuContext* ctx = emu(context);
  std::lock_guard<std::mutex> guard(Runtime::get()->lock());
  const uint64_t needed = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE;
  if (attr->qp_type != IBV_QPT_RAW_PACKET) return errno = EOPNOTSUPP, nullptr;
  if ((attr->comp_mask & needed) != needed || attr->pd == nullptr || attr->pd->context != context ||
      attr->rwq_ind_tbl == nullptr || attr->rwq_ind_tbl->context != context ||
      attr->rx_hash_conf.rx_hash_key_len > kMaxRssKeyBytes) {
    return errno = EINVAL, nullptr;
  }
  const EmuIndTable* table = emu(attr->rwq_ind_tbl);
  std::vector<uint32_t> wq_handles;
  for (const EmuWq* wq : table->wqs) {
    // An RQ object over an RNIC CQ is refused as an SQ's is (doc/hardware.md §9.21).
    if (wq->cq != nullptr && wq->cq->rnic) return errno = EPROTO, nullptr;
    wq_handles.push_back(wq->handle);
  }
  RqBinding bindings[kSteeringEntries] = {};
  auto* qp = new EmuQp();
  qp->rss = true;
  const EmuPd* ppd = emu(attr->pd);
  const int rc = ctx->device->create_rss_qp(
      ctx->context_id, ppd->pd_id, port_of(ppd), wq_handles.data(), table->log_size,
      attr->rx_hash_conf.rx_hash_function, attr->rx_hash_conf.rx_hash_key,
      attr->rx_hash_conf.rx_hash_key_len, bindings, &qp->handle);
  if (rc != 0) {
    delete qp;
    return errno = rc, nullptr;
  }
  // Entry i of the response belongs to ind_tbl[i]: the WQ and its CQ get their hardware ids.
  for (size_t i = 0; i < table->wqs.size(); ++i) {
    table->wqs[i]->wq_id = bindings[i].wq_id;
    if (table->wqs[i]->cq != nullptr) table->wqs[i]->cq->cq_id = bindings[i].cq_id;
    track_id(ctx->vf->rq_ids, bindings[i].wq_id);
    qp->rq_ids.push_back(bindings[i].wq_id);
  }
  init_qp(qp, context, attr->pd, IBV_QPT_RAW_PACKET, attr->qp_context, attr->send_cq,
          attr->recv_cq);
  qp->ibv.handle = qp->handle;
  qp->ibv.qp_num = qp->handle;
  qp->table = emu(attr->rwq_ind_tbl);
  ++qp->table->qps;
  return &qp->ibv;
}

ibv_qp* op_create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr) {
  if (attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) return create_rss_qp(context, attr);
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_PD) == 0) return errno = EINVAL, nullptr;
  return create_raw_qp(context, attr->pd, *reinterpret_cast<ibv_qp_init_attr*>(attr));
}

}  // namespace

namespace mana::emu::verbs {
void init_qp_ops(EmuContext* ctx) { ctx->vctx.create_qp_ex = &op_create_qp_ex; }
}  // namespace mana::emu::verbs

MANA_EMU_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  if (!is_emu_context(pd->context)) {
    static const auto real = next_symbol<decltype(&ibv_create_qp)>("ibv_create_qp", kIbverbs11);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(pd, attr);
  }
  ibv_qp* qp = create_raw_qp(pd->context, pd, *attr);
  if (qp != nullptr) {
    // The kernel reports the capabilities it granted: exactly what was asked.
    attr->cap.max_inline_data = 0;
  }
  return qp;
}

MANA_EMU_EXPORT int ibv_destroy_qp(ibv_qp* qp) {
  if (!is_emu_context(qp->context)) {
    static const auto real = next_symbol<decltype(&ibv_destroy_qp)>("ibv_destroy_qp", kIbverbs11);
    return real == nullptr ? ENOSYS : real(qp);
  }
  EmuContext* ctx = emu(qp->context);
  EmuQp* q = emu(qp);
  Runtime* rt = Runtime::get();
  std::lock_guard<std::mutex> guard(rt->lock());
  rt->settle_doorbells();
  const int rc = destroy_result(ctx->device->destroy_qp(q->handle));
  if (rc != 0) return rc;
  if (!q->rss) {
    --ctx->live_sqs;
    untrack_id(ctx->vf->sq_ids, q->sq_id);
  }
  for (uint32_t id : q->rq_ids) untrack_id(ctx->vf->rq_ids, id);
  // After a removal the table may be gone first (objects go in any order): not touched then.
  if (q->table != nullptr && !ctx->device->context_disassociated(ctx->context_id)) --q->table->qps;
  free_qp(ctx, q);
  return 0;
}
