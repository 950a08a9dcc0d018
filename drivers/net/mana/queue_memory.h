// SPDX-License-Identifier: BSD-3-Clause
// Queue memory for libmana (doc/hardware.md §3.1): rings are allocated by DPDK (hugepage memory,
// page aligned, zeroed) on the socket of the queue being created.
#pragma once

struct ibv_context;

namespace mana {

// Makes the next CQ/QP/WQ created on `ctx` take its rings from DPDK memory on `socket`.
// Returns 0 or a negative errno (logged).
int use_dpdk_memory_for_queues(ibv_context* ctx, int socket);

}  // namespace mana
