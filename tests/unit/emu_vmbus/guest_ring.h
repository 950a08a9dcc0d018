// SPDX-License-Identifier: BSD-3-Clause
// The guest's side of one VMBus channel as DPDK 22.11's vmbus bus implements it (its writer
// reserves room for the packet plus the 8-byte trailer and must leave a byte free; its reader
// needs the trailer to be there and skips it), written from doc/hardware.md §11.2 for the tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "vmbus/ring_buffer.h"

namespace mana::emu::vmbus::test {

class GuestRing {
 public:
  // `rings`: the channel's area; the guest writes the first half and reads the second.
  explicit GuestRing(std::span<uint8_t> rings)
      : tx_(rings.first(rings.size() / 2)), rx_(rings.subspan(rings.size() / 2)) {}

  // rte_vmbus_chan_send / _send_sglist: header, optional GPA part, data, pad, trailer.
  bool send(uint16_t type, uint16_t flags, uint64_t xact, std::span<const uint8_t> extra,
            std::span<const uint8_t> data, uint16_t hlen8_override = 0) {
    const uint32_t hlen = 16 + static_cast<uint32_t>(extra.size());
    const uint32_t pktlen = hlen + static_cast<uint32_t>(data.size());
    const uint32_t padded = (pktlen + 7) & ~7u;
    std::vector<uint8_t> bytes(padded + 8, 0);
    ChannelPacketHeader h{type, static_cast<uint16_t>(hlen8_override ? hlen8_override : hlen / 8),
                          static_cast<uint16_t>(padded / 8), flags, xact};
    std::memcpy(bytes.data(), &h, 16);
    // (memcpy from an empty span's null data() is undefined, even for 0 bytes.)
    if (!extra.empty()) std::memcpy(bytes.data() + 16, extra.data(), extra.size());
    if (!data.empty()) std::memcpy(bytes.data() + hlen, data.data(), data.size());
    RingHeader& rh = tx_.header();
    const uint32_t w = rh.windex.load(), r = rh.rindex.load(), ds = tx_.dsize();
    const uint32_t avail = w >= r ? ds - (w - r) : r - w;
    if (avail <= bytes.size()) return false;
    const uint64_t trailer = uint64_t{w} << 32;
    std::memcpy(bytes.data() + padded, &trailer, 8);
    rh.windex.store(tx_.copy_in(w, bytes.data(), static_cast<uint32_t>(bytes.size())));
    return true;
  }

  bool send_gpa(uint64_t xact, std::span<const netvsc::GpaRange> ranges,
                std::span<const uint8_t> data) {
    std::vector<uint8_t> extra(8 + ranges.size_bytes(), 0);
    const auto n = static_cast<uint32_t>(ranges.size());
    std::memcpy(extra.data() + 4, &n, 4);
    std::memcpy(extra.data() + 8, ranges.data(), ranges.size_bytes());
    return send(netvsc::kPacketGpa, netvsc::kFlagCompletionRequested, xact, extra, data);
  }

  struct Received {
    ChannelPacketHeader header{};
    std::vector<uint8_t> raw;  // the whole packet (header included), as rte_vmbus_chan_recv_raw
    uint64_t trailer = 0;
    std::span<const uint8_t> data() const {
      return std::span<const uint8_t>(raw).subspan(header.hlen8 * 8u);
    }
  };

  // rte_vmbus_chan_recv_raw: false when the ring holds no complete packet (with its trailer).
  bool recv(Received* out) {
    RingHeader& rh = rx_.header();
    const uint32_t w = rh.windex.load(), r = rh.rindex.load(), ds = rx_.dsize();
    const uint32_t used = w >= r ? w - r : ds - (r - w);
    if (used < 16 + 8) return false;
    rx_.copy_out(r, &out->header, 16);
    const uint32_t tlen = out->header.tlen8 * 8u;
    if (used < tlen + 8) return false;
    out->raw.resize(tlen);
    const uint32_t after = rx_.copy_out(r, out->raw.data(), tlen);
    rh.rindex.store(rx_.copy_out(after, &out->trailer, 8));
    return true;
  }

  RingView tx_view() const { return tx_; }
  RingView rx_view() const { return rx_; }

 private:
  RingView tx_;
  RingView rx_;
};

}  // namespace mana::emu::vmbus::test
