// SPDX-License-Identifier: BSD-3-Clause
// Toeplitz hash (doc/hardware.md §4.10): for every set input bit, XOR in the 32 key bits that start
// at that bit's position. A 64-bit window over the key keeps the next 40 key bits at hand, so each
// input byte costs one shift and eight conditional XORs, with no per-key tables.
#include "mana/toeplitz.h"

namespace mana {

const uint8_t kDefaultRssKey[40] = {
    0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a,
    0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7,
    0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
};

uint32_t toeplitz_hash(const uint8_t* key, size_t key_len, const uint8_t* input, size_t input_len) {
  // Key bits past the end count as zero, so a short key cannot make us read out of bounds.
  auto key_byte = [key, key_len](size_t i) -> uint64_t { return i < key_len ? key[i] : 0; };
  uint64_t window = 0;  // key bytes i .. i+7, most significant first
  for (size_t i = 0; i < 8; ++i) window = (window << 8) | key_byte(i);

  uint32_t hash = 0;
  for (size_t i = 0; i < input_len; ++i) {
    const uint32_t byte = input[i];
    for (unsigned bit = 0; bit < 8; ++bit) {
      const uint32_t key_bits = static_cast<uint32_t>(window >> (32 - bit));
      hash ^= key_bits & (0u - ((byte >> (7 - bit)) & 1u));
    }
    window = (window << 8) | key_byte(i + 8);
  }
  return hash;
}

}  // namespace mana
