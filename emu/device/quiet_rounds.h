// SPDX-License-Identifier: BSD-3-Clause
// Passes over several sources of doorbell stores (trap FIFOs, doorbell pages), repeated until a
// pass finds none: then every store made before one that was found was found too (doc/hardware.md
// §4.8, "Order across queues").
#pragma once

namespace mana::emu {

// Runs `round()` (returns what it found) until a round finds nothing, at most `max_rounds` times;
// returns what all rounds found.
template <typename Round>
unsigned rounds_until_quiet(unsigned max_rounds, Round&& round) {
  unsigned found = 0;
  for (unsigned r = 0; r < max_rounds; ++r) {
    const unsigned n = round();
    if (n == 0) break;
    found += n;
  }
  return found;
}

}  // namespace mana::emu
