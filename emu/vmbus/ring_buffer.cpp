// SPDX-License-Identifier: BSD-3-Clause
#include "vmbus/ring_buffer.h"

#include <algorithm>
#include <cstring>

namespace mana::emu::vmbus {

namespace {

uint32_t align8(uint32_t n) { return (n + kPacketAlign - 1) & ~(kPacketAlign - 1); }

// Bytes the reader has not consumed yet (the writer's index may equal the reader's only when the
// ring is empty: a writer always leaves at least one byte free).
uint32_t used_bytes(uint32_t windex, uint32_t rindex, uint32_t dsize) {
  return windex >= rindex ? windex - rindex : dsize - (rindex - windex);
}

}  // namespace

RingView::RingView(std::span<uint8_t> half)
    : base_(half.data()),
      data_(half.data() + kPageSize),
      dsize_(static_cast<uint32_t>(half.size() - kPageSize)) {}

void RingView::reset(uint32_t imask) const {
  std::memset(base_, 0, kPageSize);
  header().imask.store(imask, std::memory_order_release);
}

uint32_t RingView::copy_out(uint32_t index, void* dst, uint32_t len) const {
  auto* out = static_cast<uint8_t*>(dst);
  const uint32_t first = std::min(len, dsize_ - index);
  if (first != 0) std::memcpy(out, data_ + index, first);  // (an empty part may come with null)
  if (len > first) std::memcpy(out + first, data_, len - first);
  index += len;
  return index >= dsize_ ? index - dsize_ : index;
}

uint32_t RingView::copy_in(uint32_t index, const void* src, uint32_t len) const {
  const auto* in = static_cast<const uint8_t*>(src);
  const uint32_t first = std::min(len, dsize_ - index);
  if (first != 0) std::memcpy(data_ + index, in, first);  // (an empty part may come with null)
  if (len > first) std::memcpy(data_, in + first, len - first);
  index += len;
  return index >= dsize_ ? index - dsize_ : index;
}

RingReader::Result RingReader::next(netvsc::GuestPacket* out, const char** why) {
  RingHeader& h = ring_.header();
  const uint32_t windex = h.windex.load(std::memory_order_acquire);
  const uint32_t rindex = h.rindex.load(std::memory_order_relaxed);
  const uint32_t dsize = ring_.dsize();
  if (windex == rindex) return Result::kEmpty;
  auto fail = [&](const char* reason) {
    *why = reason;
    h.rindex.store(windex, std::memory_order_release);
    return Result::kMalformed;
  };
  if (windex >= dsize || rindex >= dsize) return fail("ring index beyond the ring");
  const uint32_t avail = used_bytes(windex, rindex, dsize);
  ChannelPacketHeader hdr;
  if (avail < sizeof(hdr) + kTrailerSize) return fail("partial packet header");
  ring_.copy_out(rindex, &hdr, sizeof(hdr));
  const uint32_t hlen = uint32_t{hdr.hlen8} * kPacketAlign;
  const uint32_t tlen = uint32_t{hdr.tlen8} * kPacketAlign;
  if (hlen < sizeof(hdr) || hlen > tlen) return fail("header length below 16 or beyond the packet");
  if (tlen > kMaxPacket) return fail("packet larger than 64 KiB");
  if (avail < tlen + kTrailerSize) return fail("packet longer than the bytes written");
  const uint32_t after = ring_.copy_out(rindex, scratch_.data(), tlen);
  out->type = hdr.type;
  out->flags = hdr.flags;
  out->xact_id = hdr.xact_id;
  out->body = std::span<const uint8_t>(scratch_.data() + hlen, tlen - hlen);
  out->ranges = {};
  if (hdr.type == netvsc::kPacketGpa) {
    // [header][u32 reserved][u32 count][count x {u32 len, u32 offset, u64 page}]
    constexpr uint32_t kRangesAt = sizeof(hdr) + 8;
    uint32_t count = 0;
    if (hlen < kRangesAt) return fail("GPA packet without its range count");
    std::memcpy(&count, scratch_.data() + sizeof(hdr) + 4, sizeof(count));
    if (count > kMaxRanges || kRangesAt + count * sizeof(netvsc::GpaRange) > hlen)
      return fail("GPA range count beyond the packet header");
    std::memcpy(ranges_.data(), scratch_.data() + kRangesAt, count * sizeof(netvsc::GpaRange));
    out->ranges = std::span<const netvsc::GpaRange>(ranges_.data(), count);
  }
  // Consume packet and trailer only after the copy: the guest may then reuse the space.
  const uint32_t next =
      after + kTrailerSize >= dsize ? after + kTrailerSize - dsize : after + kTrailerSize;
  h.rindex.store(next, std::memory_order_release);
  return Result::kPacket;
}

bool RingWriter::write(uint16_t type, uint16_t flags, uint64_t xact_id,
                       std::span<const uint8_t> header_extra, std::span<const uint8_t> body) {
  RingHeader& h = ring_.header();
  const uint32_t dsize = ring_.dsize();
  const uint32_t hlen =
      align8(static_cast<uint32_t>(sizeof(ChannelPacketHeader) + header_extra.size()));
  const uint32_t tlen = align8(hlen + static_cast<uint32_t>(body.size()));
  const uint32_t total = tlen + kTrailerSize;
  const uint32_t windex = h.windex.load(std::memory_order_relaxed);
  const uint32_t rindex = h.rindex.load(std::memory_order_acquire);
  if (tlen / kPacketAlign > UINT16_MAX || windex >= dsize || rindex >= dsize) return false;
  // As the guest's own writer: the ring never becomes completely full (windex == rindex means
  // empty), so the room must exceed the packet.
  if (dsize - used_bytes(windex, rindex, dsize) <= total) return false;
  const ChannelPacketHeader hdr{type, static_cast<uint16_t>(hlen / kPacketAlign),
                                static_cast<uint16_t>(tlen / kPacketAlign), flags, xact_id};
  static constexpr uint8_t kZeros[kPacketAlign] = {};
  uint32_t at = ring_.copy_in(windex, &hdr, sizeof(hdr));
  at = ring_.copy_in(at, header_extra.data(), static_cast<uint32_t>(header_extra.size()));
  at = ring_.copy_in(at, kZeros, hlen - static_cast<uint32_t>(sizeof(hdr) + header_extra.size()));
  at = ring_.copy_in(at, body.data(), static_cast<uint32_t>(body.size()));
  at = ring_.copy_in(at, kZeros, tlen - hlen - static_cast<uint32_t>(body.size()));
  const uint64_t trailer = uint64_t{windex} << 32;  // where the packet started, as guests write it
  at = ring_.copy_in(at, &trailer, sizeof(trailer));
  h.windex.store(at, std::memory_order_release);
  return true;
}

}  // namespace mana::emu::vmbus
