// SPDX-License-Identifier: BSD-3-Clause
// manadv_init_obj: the cached queue geometry of doc/hardware.md §3.3, no other validation (as
// libmana).
#include <cerrno>

#include "verbs/exports.h"
#include "verbs/real_verbs.h"
#include "verbs/runtime.h"

using namespace mana::emu::verbs;

namespace {

constexpr uint64_t kKnownTypes = MANADV_OBJ_QP | MANADV_OBJ_CQ | MANADV_OBJ_RWQ;

// The context of the first object the call asks about (libmana crashes on NULLs: so do we).
ibv_context* context_of(const manadv_obj* obj, uint64_t type) {
  if (type & MANADV_OBJ_QP) return obj->qp.in->context;
  if (type & MANADV_OBJ_CQ) return obj->cq.in->context;
  if (type & MANADV_OBJ_RWQ) return obj->rwq.in->context;
  return nullptr;
}

}  // namespace

MANA_EMU_EXPORT int manadv_init_obj(manadv_obj* obj, uint64_t obj_type) {
  if (obj_type & ~kKnownTypes) return EINVAL;
  ibv_context* context = context_of(obj, obj_type);
  if (context == nullptr || !is_emu_context(context)) {
    static const auto real = next_symbol<decltype(&manadv_init_obj)>("manadv_init_obj", kMana10);
    return real == nullptr ? ENOSYS : real(obj, obj_type);
  }
  EmuContext* ctx = emu(context);
  std::lock_guard<std::mutex> guard(Runtime::get()->lock());
  void* db_page = const_cast<uint64_t*>(ctx->db_page);
  if (obj_type & MANADV_OBJ_QP) {
    const EmuQp* qp = emu(obj->qp.in);
    manadv_qp* out = obj->qp.out;
    out->sq_buf = qp->sq_buf;
    out->sq_count = qp->sq_count;
    out->sq_size = static_cast<uint32_t>(qp->sq_bytes);
    out->sq_id = qp->sq_id;
    out->tx_vp_offset = qp->tx_vp_offset;
    out->db_page = db_page;
  }
  if (obj_type & MANADV_OBJ_CQ) {
    const EmuCq* cq = emu(obj->cq.in);
    obj->cq.out->buf = cq->buf;
    obj->cq.out->count = cq->count;
    obj->cq.out->cq_id = cq->cq_id;
  }
  if (obj_type & MANADV_OBJ_RWQ) {
    const EmuWq* wq = emu(obj->rwq.in);
    manadv_rwq* out = obj->rwq.out;
    out->buf = wq->buf;
    out->count = wq->count;
    out->size = static_cast<uint32_t>(wq->buf_bytes);
    out->wq_id = wq->wq_id;
    out->db_page = db_page;
  }
  return 0;
}
