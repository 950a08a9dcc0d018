// SPDX-License-Identifier: BSD-3-Clause
#include "netvsc/receive_sections.h"

namespace mana::emu::netvsc {

void ReceiveSections::configure(uint32_t buffer_len, uint32_t section_size) {
  section_size_ = section_size;
  const uint32_t n = section_size == 0 ? 0 : buffer_len / section_size;
  in_use_.assign(n, false);
  free_.resize(n);
  // Highest id at the bottom: allocation hands out 0, 1, 2 ... first.
  for (uint32_t i = 0; i < n; ++i) free_[i] = n - 1 - i;
}

void ReceiveSections::clear() { configure(0, 0); }

uint32_t ReceiveSections::allocate() {
  if (free_.empty()) return kNone;
  const uint32_t id = free_.back();
  free_.pop_back();
  in_use_[id] = true;
  return id;
}

bool ReceiveSections::release(uint32_t id) {
  if (id >= in_use_.size() || !in_use_[id]) return false;
  in_use_[id] = false;
  free_.push_back(id);
  return true;
}

}  // namespace mana::emu::netvsc
