// SPDX-License-Identifier: BSD-3-Clause
// Opaque ids made of a random tag in the high bits and a slot index in the low bits: unpredictable
// for drivers (never sequential from 0), yet resolved by one array index on the data path. Used for
// 24-bit queue ids and 32-bit lkeys. Insert and erase run on the control path under the device
// lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace mana::emu {

template <typename T>
class TaggedTable {
 public:
  // Ids are `tag << slot_bits | slot` with a non-zero tag of `tag_bits` bits; `max_slots` bounds
  // the table below 2^slot_bits.
  TaggedTable(unsigned slot_bits, unsigned tag_bits, uint32_t max_slots, uint32_t seed)
      : slot_bits_(slot_bits),
        slot_mask_((1u << slot_bits) - 1),
        tag_max_((1u << tag_bits) - 1),
        max_slots_(max_slots),
        rng_(seed) {}

  // Returns the new id, or 0 when the table is full. `reject` is an id value never handed out.
  uint32_t insert(T* obj, uint32_t reject = 0) {
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      if (entries_.size() >= max_slots_) return 0;
      slot = static_cast<uint32_t>(entries_.size());
      entries_.push_back({0, nullptr});
    }
    std::uniform_int_distribution<uint32_t> tag(1, tag_max_);
    uint32_t id;
    do {
      id = (tag(rng_) << slot_bits_) | slot;
    } while (id == reject || id == 0);
    entries_[slot] = {id, obj};
    return id;
  }

  // Inserts `obj` under the exact id `id` when its slot is free (an id handed out before and
  // erased since: hardware that reuses queue ids, doc/hardware.md §9.22); false otherwise.
  bool insert_as(uint32_t id, T* obj) {
    const uint32_t slot = id & slot_mask_;
    if (id == 0 || slot >= entries_.size() || entries_[slot].obj != nullptr) return false;
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i] != slot) continue;
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      entries_[slot] = {id, obj};
      return true;
    }
    return false;
  }

  void erase(uint32_t id) {
    const uint32_t slot = id & slot_mask_;
    if (slot < entries_.size() && entries_[slot].id == id) {
      entries_[slot] = {0, nullptr};
      free_.push_back(slot);
    }
  }

  T* find(uint32_t id) const {
    const uint32_t slot = id & slot_mask_;
    if (slot >= entries_.size()) return nullptr;
    const Entry& e = entries_[slot];
    return e.id == id ? e.obj : nullptr;
  }

 private:
  struct Entry {
    uint32_t id;
    T* obj;
  };
  const unsigned slot_bits_;
  const uint32_t slot_mask_;
  const uint32_t tag_max_;
  const uint32_t max_slots_;
  std::mt19937 rng_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_;
};

}  // namespace mana::emu
