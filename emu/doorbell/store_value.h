// SPDX-License-Identifier: BSD-3-Clause
// The value a store of `width` bytes writes: the low bytes of its register, which the decoders
// (x86-64 and AArch64) and the AArch64 completion of an exchange share.
#pragma once

#include <cstdint>

namespace mana::emu::doorbell {

constexpr uint64_t low_bytes(uint64_t v, unsigned width) {
  return width >= 8 ? v : v & ((uint64_t{1} << (8 * width)) - 1);
}

}  // namespace mana::emu::doorbell
