// SPDX-License-Identifier: BSD-3-Clause
// Toeplitz hash as NDIS/MANA RSS computes it (doc/hardware.md §4.10), and the NDIS hash inputs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana {

// The default RSS key of doc/hardware.md §2.5 (40 bytes).
extern const uint8_t kDefaultRssKey[40];

// 32-bit Toeplitz hash of `input` under `key` (key_len >= input_len + 4).
uint32_t toeplitz_hash(const uint8_t* key, size_t key_len, const uint8_t* input, size_t input_len);

}  // namespace mana
