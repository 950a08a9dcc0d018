// SPDX-License-Identifier: BSD-3-Clause
#include "verbs/held_doorbells.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "doorbell/trap.h"
#include "verbs/cmd_fd.h"
#include "verbs/runtime.h"

namespace mana::emu::verbs {

namespace {
void* page_of(const EmuContext* ctx) { return const_cast<uint64_t*>(ctx->db_page); }
}  // namespace

int held_doorbells_open(EmuContext* ctx) {
  auto* fifo = doorbell::DoorbellFifo::init(cmd_fifo_memory(ctx->cmd_map), kCmdFifoCapacity);
  if (fifo == nullptr) return ENOMEM;
  if (!Runtime::get()->thread().add_fifo(ctx->device, fifo)) return ENOSPC;
  ctx->held_fifo = fifo;
  return 0;
}

bool hold_doorbells(EmuContext* ctx) {
  if (ctx->doorbells_held) return true;
  // Stores made so far are sampled first: they reach the device before the trapped ones.
  ctx->device->hold_doorbell_page(ctx->context_id);
  int rc = mprotect(page_of(ctx), doorbell::kTrapPageSize, PROT_READ) == 0 ? 0 : errno;
  if (rc == 0) rc = doorbell::trap_register(page_of(ctx), ctx->context_id, ctx->held_fifo);
  if (rc != 0) {
    std::fprintf(stderr, "mana-emu: cannot trap the doorbell page of context %u: %s\n",
                 ctx->context_id, std::strerror(rc));
    mprotect(page_of(ctx), doorbell::kTrapPageSize, PROT_READ | PROT_WRITE);
    ctx->device->release_doorbell_page(ctx->context_id);
    return false;
  }
  ctx->doorbells_held = true;
  Runtime::get()->doorbells_held(+1);
  return true;
}

void release_doorbells(EmuContext* ctx) {
  if (!ctx->doorbells_held) return;
  Runtime::get()->thread().settle();  // every trapped store handed over (lockstep: drained here)
  doorbell::trap_unregister(page_of(ctx));
  mprotect(page_of(ctx), doorbell::kTrapPageSize, PROT_READ | PROT_WRITE);
  ctx->device->release_doorbell_page(ctx->context_id);
  ctx->doorbells_held = false;
  Runtime::get()->doorbells_held(-1);
}

void held_doorbells_close(EmuContext* ctx) {
  if (ctx->held_fifo == nullptr) return;
  release_doorbells(ctx);
  Runtime::get()->thread().remove_fifo(ctx->held_fifo);
  ctx->held_fifo = nullptr;
}

}  // namespace mana::emu::verbs
