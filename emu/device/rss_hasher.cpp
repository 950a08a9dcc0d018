// SPDX-License-Identifier: BSD-3-Clause
#include "device/rss_hasher.h"

#include <cstring>

#include "mana/gdma_format.h"

namespace mana::emu {

namespace {

// The 32 key bits starting at bit `bit` (bit 0 = most significant bit of key byte 0).
uint32_t key_window(const uint8_t* key, uint32_t bit) {
  uint64_t w = 0;
  for (uint32_t b = 0; b < 5; ++b) w = (w << 8) | key[bit / 8 + b];
  return static_cast<uint32_t>(w >> (8 - bit % 8));
}

// N is a compile-time size so the copy stays inline on the per-packet path.
template <uint32_t N>
void append(RssInput* in, const uint8_t* p) {
  std::memcpy(in->bytes + in->len, p, N);
  in->len += N;
}

}  // namespace

RssHasher::RssHasher(const uint8_t* key40) {
  for (uint32_t i = 0; i < kMaxRssInput; ++i) {
    std::array<uint32_t, 8> bit_window;
    for (uint32_t b = 0; b < 8; ++b) bit_window[b] = key_window(key40, i * 8 + b);
    for (uint32_t v = 0; v < 256; ++v) {
      uint32_t h = 0;
      for (uint32_t b = 0; b < 8; ++b)
        if (v & (0x80u >> b)) h ^= bit_window[b];
      table_[i][v] = h;
    }
  }
}

RssInput rss_input(const uint8_t* frame, const FrameInfo& info) {
  RssInput in;
  const bool v4 = info.l3 == FrameInfo::L3::kIpv4;
  const bool v6 = info.l3 == FrameInfo::L3::kIpv6;
  if (!v4 && !v6) return in;
  const uint8_t* ip = frame + info.l3_offset;
  if (v4)
    append<8>(&in, ip + 12);  // source, destination
  else
    append<32>(&in, ip + 8);
  const bool ports = !info.fragment && info.l4_offset != 0 && info.l4_len >= 4 &&
                     (info.l4_proto == 6 || info.l4_proto == 17);
  if (ports) {
    append<4>(&in, frame + info.l4_offset);  // source port, destination port
    if (info.l4_proto == 6)
      in.hash_type = v4 ? hw::kHashTcpIpv4 : hw::kHashTcpIpv6;
    else
      in.hash_type = v4 ? hw::kHashUdpIpv4 : hw::kHashUdpIpv6;
  } else {
    in.hash_type = v4 ? hw::kHashIpv4 : hw::kHashIpv6;
  }
  return in;
}

}  // namespace mana::emu
