// SPDX-License-Identifier: BSD-3-Clause
#include "fake_vmbus.h"

#include <cstring>

namespace mana::emu::netvsc::test {

uint32_t HostPacket::nvs_type() const {
  uint32_t t = 0;
  if (body.size() >= 4) std::memcpy(&t, body.data(), 4);
  return t;
}

bool FakeChannel::send_inband(std::span<const uint8_t> body, uint64_t xact_id,
                              bool completion_requested) {
  if (room == 0) return false;
  --room;
  packets.push_back(
      {kPacketInband, xact_id, completion_requested, 0, {}, {body.begin(), body.end()}});
  return true;
}

bool FakeChannel::send_completion(std::span<const uint8_t> body, uint64_t xact_id) {
  if (room == 0) return false;
  --room;
  packets.push_back({kPacketCompletion, xact_id, false, 0, {}, {body.begin(), body.end()}});
  return true;
}

bool FakeChannel::send_rxbuf(uint16_t xfer_pageset_id, std::span<const RxbufRange> ranges,
                             std::span<const uint8_t> body, uint64_t xact_id) {
  if (room == 0) return false;
  --room;
  packets.push_back({kPacketRxbuf,
                     xact_id,
                     false,
                     xfer_pageset_id,
                     {ranges.begin(), ranges.end()},
                     {body.begin(), body.end()}});
  return true;
}

FakeMemory::FakeMemory(uint32_t rxbuf_len, uint32_t sendbuf_len, uint32_t guest_pages)
    : rxbuf(rxbuf_len), sendbuf(sendbuf_len), ram(size_t{guest_pages} * 4096) {}

std::span<uint8_t> FakeMemory::guest_range(uint64_t page, uint32_t offset, uint32_t len) {
  const uint64_t start = page * 4096 + offset;
  const uint64_t base = kFirstPage * 4096;
  if (page < kFirstPage || start + len > base + ram.size()) return {};
  return {ram.data() + (start - base), len};
}

uint64_t FakeMemory::alloc(uint32_t len, uint32_t offset) {
  next = (next + 4095) & ~uint64_t{4095};
  const uint64_t address = next + offset;
  next = address + len;
  return address;
}

unsigned FakeHooks::offer_subchannels(unsigned count) {
  offer_calls.push_back(count);
  unsigned n = 0;
  for (unsigned i = offered + 1; i < channels.size() && n < count; ++i, ++n)
    channels[i] = std::make_unique<FakeChannel>();
  offered += n;
  return n;
}

}  // namespace mana::emu::netvsc::test
