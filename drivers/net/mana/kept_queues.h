// SPDX-License-Identifier: BSD-3-Clause
// Queue structs that outlive their release (doc/guide.md, "Multi-process"). A secondary's lcore may
// have loaded a queue pointer just before the primary released that queue (a reconfigure to fewer
// queues, or a new ring size, which DPDK does by release + setup): its burst must still find a gate
// to check. So a released queue keeps its struct, with the gate closed, in the port's slot for that
// queue id; the next setup of the id reuses it, and only dev_close frees them.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include <rte_malloc.h>

#include "priv.h"

namespace mana {

// The struct for queue `idx` (`slot` is PortPriv's kept pointer for it), zeroed except for the
// gate (a stale burst of another process may be at the gate this moment; it stays closed until
// dev_start opens it). nullptr when DPDK memory is exhausted. A reused struct stays on the socket
// it was first allocated on.
template <typename Q>
Q* kept_queue_struct(Q*& slot, const char* name, int socket) {
  static_assert(std::is_standard_layout_v<Q> && offsetof(Q, gate) == 0);
  if (slot == nullptr) {
    slot = static_cast<Q*>(rte_zmalloc_socket(name, sizeof(Q), RTE_CACHE_LINE_SIZE, socket));
    return slot;
  }
  std::memset(reinterpret_cast<char*>(slot) + sizeof(QueueGate), 0, sizeof(Q) - sizeof(QueueGate));
  return slot;
}

// At dev_close, after every queue was released: no burst may run any more (secondaries detach
// before the primary closes).
inline void free_kept_queues(PortPriv& priv) {
  for (RxQueue*& q : priv.kept_rxq) {
    rte_free(q);
    q = nullptr;
  }
  for (TxQueue*& q : priv.kept_txq) {
    rte_free(q);
    q = nullptr;
  }
}

}  // namespace mana
