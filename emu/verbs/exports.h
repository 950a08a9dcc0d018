// SPDX-License-Identifier: BSD-3-Clause
// Helpers for the interposed rdma-core entry points (exports.map gives them rdma-core's versions).
#pragma once

#define MANA_EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace mana::emu::verbs {
inline constexpr char kIbverbs10[] = "IBVERBS_1.0";
inline constexpr char kIbverbs11[] = "IBVERBS_1.1";
inline constexpr char kIbverbs17[] = "IBVERBS_1.7";
inline constexpr char kIbverbs18[] = "IBVERBS_1.8";
inline constexpr char kMana10[] = "MANA_1.0";
}  // namespace mana::emu::verbs
