// SPDX-License-Identifier: BSD-3-Clause
#include "doorbell/store_abort.h"

#include <unistd.h>

#include <cstdlib>

#include "doorbell/store_decoder.h"

namespace mana::emu::doorbell {
namespace {

// A fixed buffer line builder: no allocation, no stdio.
class Line {
 public:
  void text(const char* s) {
    while (*s != '\0') put(*s++);
  }
  void hex(uint64_t v, int digits) {
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
      put("0123456789abcdef"[(v >> shift) & 15]);
  }
  void flush() {
    size_t done = 0;
    while (done < len_) {
      const ssize_t n = write(STDERR_FILENO, buf_ + done, len_ - done);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }

 private:
  void put(char c) {
    if (len_ < sizeof(buf_)) buf_[len_++] = c;
  }
  char buf_[256];
  size_t len_ = 0;
};

}  // namespace

void abort_on_store(const char* reason, uint64_t rip) noexcept {
  constexpr uint64_t kPage = 4096;
  const uint64_t page_left = kPage - (rip & (kPage - 1));
  const uint64_t count = page_left < kMaxInstructionLength ? page_left : kMaxInstructionLength;
  Line line;
  line.text("mana-emu doorbell trap: ");
  line.text(reason);
  line.text(" at rip 0x");
  line.hex(rip, 16);
  line.text(": bytes");
  const auto* code = reinterpret_cast<const uint8_t*>(rip);
  for (uint64_t i = 0; i < count; ++i) {
    line.text(" ");
    line.hex(code[i], 2);
  }
  line.text("\n");
  line.flush();
  abort();
}

}  // namespace mana::emu::doorbell
