// SPDX-License-Identifier: BSD-3-Clause
// Deterministic inputs for the fuzz tests (parsers, completion handling): random numbers, bytes,
// strings of a grammar's tokens and random edits of valid inputs, all from a fixed seed so that a
// failure can be replayed (each test names the seed and the iteration or step of a failing input).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace mana::fuzz {

// One count for the normal and the sanitizer builds: a few seconds under ASan or TSan.
inline constexpr unsigned kIterations = 100000;

// The seed of a run: MANA_FUZZ_SEED when set (to replay a failure or explore), else `fixed`. Each
// test reports it with a failure.
inline uint32_t seed_or_env(uint32_t fixed) {
  const char* s = std::getenv("MANA_FUZZ_SEED");
  return s != nullptr && *s != '\0' ? static_cast<uint32_t>(std::strtoul(s, nullptr, 0)) : fixed;
}

// Scales a test's iteration count by MANA_FUZZ_SCALE: N > 1 runs N times as many (a long run by
// hand), a fraction fewer (0.1 under qemu-user, which runs arm64 code some 10 times slower:
// scripts/test-arm64.sh); at least one. Unset: `n`.
inline unsigned scaled(unsigned n) {
  const char* s = std::getenv("MANA_FUZZ_SCALE");
  const double v = s != nullptr ? std::strtod(s, nullptr) : 1.0;
  if (!(v > 0)) return n;
  const double total = static_cast<double>(n) * v;
  return total < 1 ? 1u : total > 4e9 ? 4000000000u : static_cast<unsigned>(total);
}

// The parsers' iteration count, scaled by MANA_FUZZ_SCALE.
inline unsigned iterations() { return scaled(kIterations); }

class FuzzInput {
 public:
  explicit FuzzInput(uint32_t seed) : rng_(seed) {}

  uint32_t next() { return static_cast<uint32_t>(rng_()); }
  uint32_t below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(rng_() % n); }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }

  // Random bytes 1..255 (no NUL: the parsers also take C strings), up to `max_len` of them.
  std::string bytes(size_t max_len) {
    std::string s(below(static_cast<uint32_t>(max_len) + 1), '\0');
    for (char& c : s) c = static_cast<char>(1 + below(255));
    return s;
  }

  // `count` tokens picked at random (with repetition) and concatenated.
  std::string tokens(const std::vector<std::string>& alphabet, unsigned count) {
    std::string s;
    for (unsigned i = 0; i < count; ++i)
      s += alphabet[below(static_cast<uint32_t>(alphabet.size()))];
    return s;
  }

  // `edits` random edits of `s`: delete, insert a token or a random byte, replace a byte,
  // duplicate or drop a span.
  std::string mutate(std::string s, unsigned edits, const std::vector<std::string>& alphabet) {
    for (unsigned e = 0; e < edits; ++e) {
      const size_t at = below(static_cast<uint32_t>(s.size()) + 1);
      const size_t span = 1 + below(16);
      switch (below(6)) {
        case 0:
          if (at < s.size()) s.erase(at, span);
          break;
        case 1:
          s.insert(at, alphabet[below(static_cast<uint32_t>(alphabet.size()))]);
          break;
        case 2:
          s.insert(at, 1, static_cast<char>(1 + below(255)));
          break;
        case 3:
          if (at < s.size()) s[at] = static_cast<char>(1 + below(255));
          break;
        case 4:
          if (at < s.size()) s.insert(at, s.substr(at, span));
          break;
        default:
          s = s.substr(0, at);
          break;
      }
    }
    return s;
  }

 private:
  std::mt19937 rng_;
};

// True when `error` is one non-empty line.
inline bool one_line(const std::string& error) {
  return !error.empty() && error.find('\n') == std::string::npos;
}

}  // namespace mana::fuzz
