// SPDX-License-Identifier: BSD-3-Clause
#include "mana/frame_parse.h"

#include "mana/frame_parse_inline.h"

namespace mana {

bool parse_frame(const uint8_t* frame, uint32_t len, FrameInfo* out) {
  return parse_frame_inline(frame, len, out);
}

}  // namespace mana
