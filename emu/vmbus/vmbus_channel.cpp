// SPDX-License-Identifier: BSD-3-Clause
#include "vmbus/vmbus_channel.h"

#include <cstdio>
#include <cstring>

namespace mana::emu::vmbus {

namespace {
// The header fields of a transfer-page packet after the packet header (DPDK's
// vmbus_chanpkt_rxbuf): page set id, reserved, range count, then the ranges.
constexpr size_t kMaxRxbufRanges = 64;
}  // namespace

VmbusChannel::VmbusChannel(std::span<uint8_t> rings)
    : outbound_(rings.first(rings.size() / 2)),
      inbound_(rings.subspan(rings.size() / 2)),
      reader_(outbound_),
      writer_(inbound_) {}

void VmbusChannel::reset() {
  outbound_.reset(0);
  inbound_.reset(1);
}

bool VmbusChannel::counted(bool written) {
  if (written)
    ++counters_.host_packets;
  else
    ++counters_.ring_full;
  return written;
}

bool VmbusChannel::send_inband(std::span<const uint8_t> body, uint64_t xact_id,
                               bool completion_requested) {
  return counted(writer_.write(netvsc::kPacketInband,
                               completion_requested ? netvsc::kFlagCompletionRequested : 0, xact_id,
                               {}, body));
}

bool VmbusChannel::send_completion(std::span<const uint8_t> body, uint64_t xact_id) {
  return counted(writer_.write(netvsc::kPacketCompletion, 0, xact_id, {}, body));
}

bool VmbusChannel::send_rxbuf(uint16_t xfer_pageset_id, std::span<const netvsc::RxbufRange> ranges,
                              std::span<const uint8_t> body, uint64_t xact_id) {
  if (ranges.size() > kMaxRxbufRanges) return counted(false);
  uint8_t extra[8 + kMaxRxbufRanges * sizeof(netvsc::RxbufRange)];
  const uint16_t reserved = 0;
  const auto count = static_cast<uint32_t>(ranges.size());
  std::memcpy(extra, &xfer_pageset_id, 2);
  std::memcpy(extra + 2, &reserved, 2);
  std::memcpy(extra + 4, &count, 4);
  std::memcpy(extra + 8, ranges.data(), ranges.size_bytes());
  return counted(writer_.write(netvsc::kPacketRxbuf, 0, xact_id,
                               std::span<const uint8_t>(extra, 8 + ranges.size_bytes()), body));
}

void VmbusChannel::report_malformed(const char* name, const char* why) {
  ++counters_.malformed_rings;
  std::fprintf(stderr, "mana-emu: %s: guest ring malformed (%s): its unread packets were dropped\n",
               name, why);
}

}  // namespace mana::emu::vmbus
