// SPDX-License-Identifier: BSD-3-Clause
// RSS on the emulated NIC (doc/hardware.md §2.5, §4.10): the NDIS hash input of a parsed frame and
// a table-driven Toeplitz hash (one lookup per input byte) so that the per-packet cost stays small.
#pragma once

#include <array>
#include <cstdint>

#include "mana/frame_parse.h"

namespace mana::emu {

// The longest NDIS input: IPv6 source and destination addresses plus two ports.
inline constexpr uint32_t kMaxRssInput = 36;

struct RssInput {
  uint8_t bytes[kMaxRssInput];
  uint32_t len = 0;
  uint32_t hash_type = 0;  // a single hw::HashType bit; 0 for non-IP frames (no hash)
};

// TCP/UDP (not fragmented) -> 4-tuple, other IP -> 2-tuple, non-IP -> nothing.
RssInput rss_input(const uint8_t* frame, const FrameInfo& info);

class RssHasher {
 public:
  explicit RssHasher(const uint8_t* key40);
  uint32_t hash(const uint8_t* input, uint32_t len) const {
    uint32_t h = 0;
    for (uint32_t i = 0; i < len; ++i) h ^= table_[i][input[i]];
    return h;
  }

 private:
  // table_[i][v]: the hash contribution of byte value v at input position i.
  std::array<std::array<uint32_t, 256>, kMaxRssInput> table_;
};

}  // namespace mana::emu
