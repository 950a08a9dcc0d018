// SPDX-License-Identifier: BSD-3-Clause
// Queue buffers come from the driver's allocator (manadv_set_context_attr), as in libmana.
#pragma once

#include <cstddef>

#include "verbs/objects.h"

namespace mana::emu::verbs {

inline bool has_allocators(const EmuContext* ctx) {
  return ctx->allocators.alloc != nullptr && ctx->allocators.free != nullptr;
}

// nullptr when the allocator fails. Not zeroed here: libmana does not (DPDK's allocator does).
void* alloc_queue_buffer(EmuContext* ctx, size_t bytes);
void free_queue_buffer(EmuContext* ctx, void* buf);

}  // namespace mana::emu::verbs
