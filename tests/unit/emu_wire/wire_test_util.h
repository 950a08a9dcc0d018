// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the wire tests: building wire sets, numbered frames and bounded waits.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "wire/wire.h"

namespace wire_test {

inline std::unique_ptr<mana::emu::WireSet> make(std::vector<std::string> specs,
                                                std::string* error) {
  return mana::emu::make_wires(specs.data(), static_cast<unsigned>(specs.size()), error);
}

// A frame of `len` bytes (>= 8) that carries `seq` in its first 4 bytes and a pattern derived from
// it in the rest, so any reordering, loss or corruption shows.
inline std::vector<uint8_t> numbered_frame(uint32_t seq, uint32_t len) {
  std::vector<uint8_t> f(len);
  std::memcpy(f.data(), &seq, sizeof seq);
  std::memcpy(f.data() + 4, &len, sizeof len);
  for (uint32_t i = 8; i < len; ++i) f[i] = static_cast<uint8_t>(seq * 31 + i);
  return f;
}

inline uint32_t frame_seq(const uint8_t* f) {
  uint32_t seq;
  std::memcpy(&seq, f, sizeof seq);
  return seq;
}

// Polls `done` until it returns true or `timeout` passes; short sleeps keep a 2-core machine free.
template <typename Pred>
bool wait_until(Pred done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    usleep(200);
  }
  return true;
}

}  // namespace wire_test
