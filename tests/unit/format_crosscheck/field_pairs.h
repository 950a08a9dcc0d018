// SPDX-License-Identifier: BSD-3-Clause
// One field of a hardware structure, set once through our definition (a Field<> setter of
// common/include/mana/gdma_format.h) and once through DPDK's (a C bit-field of mana.h), each into a
// zeroed 64-byte image; the two images must be byte-identical for every value tried.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include <gtest/gtest.h>

namespace mana::crosscheck {

using Image = std::array<uint8_t, 64>;  // the largest structure: a CQE

// Reads a T from the start of the image, lets `edit` change it and writes it back, so that setters
// of structures of any size work on one image type.
template <class T, class Edit>
void edit_as(Image& img, Edit edit) {
  static_assert(sizeof(T) <= sizeof(Image));
  T t;
  std::memcpy(&t, img.data(), sizeof(T));
  edit(t);
  std::memcpy(img.data(), &t, sizeof(T));
}
template <class T>
T read_as(const Image& img) {
  T t;
  std::memcpy(&t, img.data(), sizeof(T));
  return t;
}

struct FieldPair {
  const char* name;
  void (*set_ours)(Image&, uint32_t);
  uint32_t (*get_ours)(const Image&);
  void (*set_theirs)(Image&, uint32_t);
};

// Ours: field F of the 32-bit word `word` (an lvalue expression on `o`) of our type T.
#define MANA_OURS(T, word, F)                                                       \
  [](::mana::crosscheck::Image& img, uint32_t v) {                                  \
    ::mana::crosscheck::edit_as<T>(img, [v](T& o) { o.word = F::set(o.word, v); }); \
  },                                                                                \
      [](const ::mana::crosscheck::Image& img) {                                    \
        T o = ::mana::crosscheck::read_as<T>(img);                                  \
        return static_cast<uint32_t>(F::get(o.word));                               \
      }
// Theirs: the bit-field `member` (an lvalue expression on `t`) of DPDK's type T.
#define MANA_THEIRS(T, member)                                        \
  [](::mana::crosscheck::Image& img, uint32_t v) {                    \
    ::mana::crosscheck::edit_as<T>(img, [v](T& t) { t.member = v; }); \
  }

inline std::string hex(const Image& img) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < img.size(); i++) {
    std::snprintf(b, sizeof b, "%02x", img[i]);
    s += b;
    if (i % 4 == 3 && i + 1 < img.size()) s += i % 16 == 15 ? " | " : " ";
  }
  return s;
}

// Width of a field as its definition sees it: the bits an all-ones store leaves set.
inline unsigned width_of(void (*set)(Image&, uint32_t)) {
  Image img{};
  set(img, 0xFFFFFFFFu);
  unsigned bits = 0;
  for (uint8_t b : img) bits += std::popcount(b);
  return bits;
}

// Each field alone: all-ones, a walking one over all 32 bits and two alternating patterns must give
// the same bytes through both definitions, and our getter must read back what DPDK's setter wrote.
inline void expect_each_field_identical(std::span<const FieldPair> fields) {
  for (const FieldPair& f : fields) {
    EXPECT_EQ(width_of(f.set_ours), width_of(f.set_theirs)) << f.name << ": width in bits";
    std::array<uint32_t, 35> values{0xFFFFFFFFu, 0xA5A5A5A5u, 0x5A5A5A5Au};
    for (unsigned bit = 0; bit < 32; bit++) values[3 + bit] = 1u << bit;
    for (uint32_t v : values) {
      Image ours{}, theirs{};
      f.set_ours(ours, v);
      f.set_theirs(theirs, v);
      EXPECT_EQ(hex(ours), hex(theirs)) << f.name << " = 0x" << std::hex << v;
      const uint32_t mask =
          width_of(f.set_theirs) == 32 ? 0xFFFFFFFFu : (1u << width_of(f.set_theirs)) - 1;
      EXPECT_EQ(f.get_ours(theirs), v & mask)
          << f.name << " read back, written 0x" << std::hex << v;
    }
  }
}

// All fields at once, each with its own value (so that a field of ours overlapping another one
// shows up), then every field read back through our getters.
inline void expect_all_fields_identical(std::span<const FieldPair> fields) {
  for (uint32_t seed : {0x9E3779B9u, 0x7F4A7C15u, 0xFFFFFFFFu}) {
    Image ours{}, theirs{};
    std::vector<uint32_t> values;
    for (size_t k = 0; k < fields.size(); k++) {
      const uint32_t v = seed == 0xFFFFFFFFu ? seed : std::rotl(seed * (2 * k + 1), k % 32);
      values.push_back(v);
      fields[k].set_ours(ours, v);
      fields[k].set_theirs(theirs, v);
    }
    EXPECT_EQ(hex(ours), hex(theirs)) << "all fields, seed 0x" << std::hex << seed;
    for (size_t k = 0; k < fields.size(); k++) {
      const unsigned w = width_of(fields[k].set_theirs);
      const uint32_t mask = w == 32 ? 0xFFFFFFFFu : (1u << w) - 1;
      EXPECT_EQ(fields[k].get_ours(theirs), values[k] & mask) << fields[k].name;
    }
  }
}

}  // namespace mana::crosscheck
