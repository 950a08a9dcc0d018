// SPDX-License-Identifier: BSD-3-Clause
// The random walk of the data-path fuzz tests: a seeded number of steps, each run under a trace
// that names the seed and the step, stopping at the first fatal failure.
#pragma once

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "fuzz_input.h"

namespace mana::fuzz {

struct WalkResult {
  uint32_t seed;
  unsigned steps;  // steps run
  double seconds;
};

// Runs `step(in)` `steps` times (scaled by MANA_FUZZ_SCALE) from seed `fixed` (or MANA_FUZZ_SEED).
template <class Step>
WalkResult random_walk(uint32_t fixed, unsigned steps, Step step) {
  const uint32_t seed = seed_or_env(fixed);
  const unsigned total = scaled(steps);
  FuzzInput in(seed);
  const auto t0 = std::chrono::steady_clock::now();
  unsigned i = 0;
  for (; i < total && !::testing::Test::HasFatalFailure(); i++) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " (MANA_FUZZ_SEED) step " + std::to_string(i));
    step(in);
  }
  return {seed, i, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

}  // namespace mana::fuzz
