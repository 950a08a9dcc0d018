// SPDX-License-Identifier: BSD-3-Clause
#include "queue_memory.h"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <infiniband/manadv.h>
#include <rte_malloc.h>

#include "dpdk_compat.h"
#include "mana_log.h"

namespace mana {
namespace {

void* alloc_queue_memory(size_t size, void* data) {
  const int socket = static_cast<int>(reinterpret_cast<intptr_t>(data));
  void* p = rte_zmalloc_socket("mana_queue", size, compat::page_size(), socket);
  if (p == nullptr)
    MANA_DRV_LOG(ERR,
                 "no DPDK memory for a %zu-byte queue ring on socket %d: reserve more hugepages",
                 size, socket);
  return p;
}

void free_queue_memory(void* ptr, void* /*data*/) { rte_free(ptr); }

}  // namespace

int use_dpdk_memory_for_queues(ibv_context* ctx, int socket) {
  manadv_ctx_allocators allocators{};  // libmana copies it
  allocators.alloc = alloc_queue_memory;
  allocators.free = free_queue_memory;
  allocators.data = reinterpret_cast<void*>(static_cast<intptr_t>(socket));
  const int rc = manadv_set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &allocators);
  if (rc != 0) {
    MANA_DRV_LOG(ERR,
                 "manadv_set_context_attr(BUF_ALLOCATORS) failed: %s: is libmana >= v44 installed?",
                 strerror(rc));
    return -rc;
  }
  return 0;
}

}  // namespace mana
