// SPDX-License-Identifier: BSD-3-Clause
#include "verbs/queue_buffer.h"

namespace mana::emu::verbs {

void* alloc_queue_buffer(EmuContext* ctx, size_t bytes) {
  return ctx->allocators.alloc(bytes, ctx->allocators.data);
}

void free_queue_buffer(EmuContext* ctx, void* buf) {
  if (buf != nullptr) ctx->allocators.free(buf, ctx->allocators.data);
}

}  // namespace mana::emu::verbs
