// SPDX-License-Identifier: BSD-3-Clause
// What creating the hardware queues of rx_queue.h and tx_queue.h takes besides the verbs calls:
// libmana's rings in DPDK memory (doc/hardware.md §3.1), the user-space provider's own queue-size
// limit (§3.2, §6.1: rdma-core 44..48's libmana refuses CQs, WQs and raw QPs of more than 256
// entries whatever the kernel reports; v49 dropped that check), and the messages of failures that
// users can fix.
#pragma once

#include <cstdint>

#include "priv.h"

struct ibv_context;

namespace mana {

// ---- ring memory ----

// Makes the next CQ/QP/WQ created on `ctx` take its rings from DPDK memory on `socket`.
// Returns 0 or a negative errno (logged).
int use_dpdk_memory_for_queues(ibv_context* ctx, int socket);

// ---- CQ ids ----

// What rdma-core >= 62's manadv_init_obj reports for a CQ no QP has bound yet; the queues read
// their CQ's id only after their raw or RSS QP exists (doc/hardware.md §9.21).
inline constexpr uint32_t kCqIdUnassigned = UINT32_MAX;

// False (logged) when the CQ of `kind` queue `queue` still has no id after its QP was created.
bool cq_id_assigned(const PortPriv& priv, const char* kind, uint16_t queue, uint32_t cq_id);

// ---- the provider's queue-size limit ----

inline constexpr uint32_t kLegacyLibmanaMaxWr = 256;

// Learns the limit by asking rather than by reading a version: a CQ of the kernel's size is either
// created (no limit of its own: returns 0) or refused with EINVAL while one of 256 entries works
// (returns 256). Every CQ is destroyed again. Needs priv.ctx; called once at probe.
uint32_t probe_provider_max_wr(const PortPriv& priv);

// Where the descriptor limit of max_desc_of(caps) comes from, for messages.
const char* desc_limit_source(const DeviceCaps& caps);

// Says at queue setup when the ring has `n` descriptors for `nb_desc` requested: NOTICE when the
// limit cut the request (naming it and its source), INFO when it was only rounded to a power of
// two.
void log_ring_size(const PortPriv& priv, const char* kind, uint16_t idx, uint32_t n,
                   uint32_t nb_desc);

// ---- failures ----

// Logs why creating `what` (e.g. "TX queue 0 QP") failed with errno `err` and returns -err. On EIO,
// outside the EAL interrupt thread, it first waits up to 2 s for the VF removal's event, which can
// come after the failure (doc/hardware.md §2.7), so that a removal is reported as one.
int log_queue_create_error(const PortPriv& priv, const char* what, int err);

}  // namespace mana
