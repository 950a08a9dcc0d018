// SPDX-License-Identifier: BSD-3-Clause
// The receive buffer cut into equal sections (doc/hardware.md §11.4): the host writes one RNDIS
// message into a free section, names it by its index in the RXBUF packet's transaction id, and may
// reuse it only once the guest completed that id (COMP 108).
#pragma once

#include <cstdint>
#include <vector>

namespace mana::emu::netvsc {

class ReceiveSections {
 public:
  static constexpr uint32_t kNone = 0xffffffff;

  // `buffer_len` bytes cut into sections of `section_size` (the remainder is unused).
  void configure(uint32_t buffer_len, uint32_t section_size);
  void clear();  // no sections (buffer disconnected)

  uint32_t section_size() const { return section_size_; }
  uint32_t count() const { return static_cast<uint32_t>(in_use_.size()); }
  uint32_t in_use() const { return count() - static_cast<uint32_t>(free_.size()); }

  uint32_t allocate();  // kNone when every section is with the guest
  // False when `id` is not a section the guest holds (a malformed or repeated completion).
  bool release(uint32_t id);

 private:
  uint32_t section_size_ = 0;
  std::vector<uint32_t> free_;  // a stack: the most recently released section is reused first
  std::vector<bool> in_use_;
};

}  // namespace mana::emu::netvsc
