// SPDX-License-Identifier: BSD-3-Clause
// What rdma-core's libmana does with a CQ by version (hw libmana-cq-rule, doc/hardware.md §9.21):
// pure functions, unit-tested apart from the LD_PRELOAD library.
#pragma once

#include <cstdint>

#include "device/hw_behaviour.h"
#include "verbs/buffer_sizing.h"

namespace mana::emu::verbs {

using LibmanaCqRule = HwBehaviour::LibmanaCqRule;

// A CQ created without the application's buffer allocators: refused with EINVAL (rdma-core
// 44..52), or an RDMA (RNIC) CQ in libmana's own memory (53 on, e3ddaeb62), which raw and RSS
// QPs cannot use. With the allocators it is always an Ethernet CQ in the application's memory.
enum class CqKind : uint8_t { kRefused, kEthernet, kRnic };
constexpr CqKind cq_kind(LibmanaCqRule rule, bool allocators) {
  if (allocators) return CqKind::kEthernet;
  return rule == LibmanaCqRule::kV44 ? CqKind::kRefused : CqKind::kRnic;
}

// The cq_id manadv_init_obj reports for an Ethernet CQ no QP has bound yet: 0 (the zeroed struct;
// rdma-core 44..61), UINT32_MAX from 62 on (a09db86ec keeps the kernel's "no id yet" answer).
constexpr uint32_t kCqIdUnassigned = UINT32_MAX;
constexpr uint32_t unbound_cq_id(LibmanaCqRule rule) {
  return rule == LibmanaCqRule::kV62 ? kCqIdUnassigned : 0;
}

// An RNIC CQ's count is its whole buffer (the Ethernet CQ's stays the requested cqe, "to preserve
// old behaviour for DPDK").
constexpr uint32_t rnic_cq_count(uint32_t cqe) {
  return static_cast<uint32_t>(cq_buffer_size(cqe) / kCqeBytes);
}

}  // namespace mana::emu::verbs
