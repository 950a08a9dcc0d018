// SPDX-License-Identifier: BSD-3-Clause
// Protection domains, parent domains and memory registration for emulated contexts.
#include <cerrno>
#include <cstdint>

#include "verbs/exports.h"
#include "verbs/real_verbs.h"
#include "verbs/runtime.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

using namespace mana::emu;
using namespace mana::emu::verbs;

namespace {

ibv_mr* reg_emu_mr(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access) {
  // GVA memory regions: the device translates process virtual addresses, so iova must be addr.
  if (iova != reinterpret_cast<uintptr_t>(addr)) return errno = EINVAL, nullptr;
  EmuContext* ctx = emu(pd->context);
  access &= ~static_cast<unsigned>(IBV_ACCESS_OPTIONAL_RANGE);  // optional bits: best effort
  auto* mr = new EmuMr();
  uint32_t lkey = 0;
  int rc;
  {
    std::lock_guard<std::mutex> guard(Runtime::get()->lock());
    rc = ctx->device->reg_mr(emu(pd)->pd_id, reinterpret_cast<uintptr_t>(addr), length, access,
                             &lkey);
  }
  if (rc != 0) {
    delete mr;
    return errno = rc, nullptr;
  }
  mr->ibv.context = pd->context;
  mr->ibv.pd = pd;
  mr->ibv.addr = addr;
  mr->ibv.length = length;
  mr->ibv.handle = lkey;
  mr->ibv.lkey = lkey;
  mr->ibv.rkey = lkey;
  return &mr->ibv;
}

ibv_pd* op_alloc_parent_domain(ibv_context* context, ibv_parent_domain_init_attr* attr) {
  // libmana supports only a PD context (DPDK passes the IB port in it).
  if (attr == nullptr || attr->pd == nullptr || attr->td != nullptr ||
      (attr->comp_mask & ~static_cast<uint32_t>(IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) != 0 ||
      attr->pd->context != context || emu(attr->pd)->parent) {
    return errno = EINVAL, nullptr;
  }
  auto* ppd = new EmuPd();
  ppd->ibv.context = context;
  ppd->ibv.handle = attr->pd->handle;
  ppd->pd_id = emu(attr->pd)->pd_id;
  ppd->parent = true;
  if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT) ppd->pd_context = attr->pd_context;
  return &ppd->ibv;
}

}  // namespace

namespace mana::emu::verbs {
void init_pd_ops(EmuContext* ctx) { ctx->vctx.alloc_parent_domain = &op_alloc_parent_domain; }
}  // namespace mana::emu::verbs

MANA_EMU_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  if (!is_emu_context(context)) {
    static const auto real = next_symbol<decltype(&ibv_alloc_pd)>("ibv_alloc_pd", kIbverbs11);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(context);
  }
  EmuContext* ctx = emu(context);
  if (refuse_query_only(ctx)) return nullptr;
  auto* pd = new EmuPd();
  int rc;
  {
    std::lock_guard<std::mutex> guard(Runtime::get()->lock());
    rc = ctx->device->alloc_pd(ctx->context_id, &pd->pd_id);
  }
  if (rc != 0) {
    delete pd;
    return errno = rc, nullptr;
  }
  pd->ibv.context = context;
  pd->ibv.handle = pd->pd_id;
  return &pd->ibv;
}

MANA_EMU_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  if (!is_emu_context(pd->context)) {
    static const auto real = next_symbol<decltype(&ibv_dealloc_pd)>("ibv_dealloc_pd", kIbverbs11);
    return real == nullptr ? ENOSYS : real(pd);
  }
  EmuPd* p = emu(pd);
  if (!p->parent) {  // a parent domain is user memory only
    std::lock_guard<std::mutex> guard(Runtime::get()->lock());
    int rc = destroy_result(emu(pd->context)->device->dealloc_pd(p->pd_id));
    if (rc != 0) return rc;
  }
  delete p;
  return 0;
}

MANA_EMU_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  if (!is_emu_context(pd->context)) {
    static const auto real = next_symbol<decltype(&ibv_reg_mr)>("ibv_reg_mr", kIbverbs11);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(pd, addr, length, access);
  }
  return reg_emu_mr(pd, addr, length, reinterpret_cast<uintptr_t>(addr),
                    static_cast<unsigned>(access));
}

MANA_EMU_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                        int access) {
  if (!is_emu_context(pd->context)) {
    static const auto real = next_symbol<decltype(&ibv_reg_mr_iova)>("ibv_reg_mr_iova", kIbverbs17);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(pd, addr, length, iova, access);
  }
  return reg_emu_mr(pd, addr, length, iova, static_cast<unsigned>(access));
}

MANA_EMU_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                         unsigned int access) {
  if (!is_emu_context(pd->context)) {
    static const auto real =
        next_symbol<decltype(&ibv_reg_mr_iova2)>("ibv_reg_mr_iova2", kIbverbs18);
    if (real == nullptr) return errno = ENOSYS, nullptr;
    return real(pd, addr, length, iova, access);
  }
  return reg_emu_mr(pd, addr, length, iova, access);
}

MANA_EMU_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  if (!is_emu_context(mr->context)) {
    static const auto real = next_symbol<decltype(&ibv_dereg_mr)>("ibv_dereg_mr", kIbverbs11);
    return real == nullptr ? ENOSYS : real(mr);
  }
  {
    std::lock_guard<std::mutex> guard(Runtime::get()->lock());
    int rc = destroy_result(emu(mr->context)->device->dereg_mr(mr->lkey));
    if (rc != 0) return rc;
  }
  delete emu(mr);
  return 0;
}
