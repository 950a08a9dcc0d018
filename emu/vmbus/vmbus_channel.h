// SPDX-License-Identifier: BSD-3-Clause
// One VMBus channel as the host sees it (doc/hardware.md §11.2): its ring area holds the guest's
// outbound ring (first half, guest to host) and its inbound ring (second half, host to guest), as
// uio_hv_generic's `txrx_rings` map and a subchannel's `ring` file lay them out.
#pragma once

#include <cstdint>
#include <span>

#include "netvsc/host_interface.h"
#include "vmbus/ring_buffer.h"

namespace mana::emu::vmbus {

struct ChannelCounters {
  uint64_t guest_packets = 0;    // packets read from the guest's outbound ring
  uint64_t host_packets = 0;     // packets written into the inbound ring
  uint64_t ring_full = 0;        // host writes refused for lack of room
  uint64_t malformed_rings = 0;  // times the outbound ring held garbage (its contents dropped)
};

class VmbusChannel final : public netvsc::HostChannel {
 public:
  // `rings`: both halves, each a header page plus data (the area's size is even and >= 4 pages).
  explicit VmbusChannel(std::span<uint8_t> rings);

  // A fresh channel open: both rings empty; the guest's inbound interrupt masked, as
  // uio_hv_generic opens it (the guest polls).
  void reset();

  // Reads up to `budget` guest packets, handing each to `sink(const GuestPacket&)`; returns how
  // many it read. A malformed ring logs one line naming `name` and the reason.
  template <typename Sink>
  unsigned poll(unsigned budget, const char* name, Sink&& sink) {
    unsigned n = 0;
    netvsc::GuestPacket packet;
    const char* why = nullptr;
    while (n < budget) {
      const RingReader::Result r = reader_.next(&packet, &why);
      if (r == RingReader::Result::kEmpty) break;
      if (r == RingReader::Result::kMalformed) {
        report_malformed(name, why);
        break;
      }
      ++counters_.guest_packets;
      ++n;
      sink(packet);
    }
    return n;
  }

  bool send_inband(std::span<const uint8_t> body, uint64_t xact_id,
                   bool completion_requested) override;
  bool send_completion(std::span<const uint8_t> body, uint64_t xact_id) override;
  bool send_rxbuf(uint16_t xfer_pageset_id, std::span<const netvsc::RxbufRange> ranges,
                  std::span<const uint8_t> body, uint64_t xact_id) override;

  const ChannelCounters& counters() const { return counters_; }
  RingView outbound() const { return outbound_; }
  RingView inbound() const { return inbound_; }

 private:
  bool counted(bool written);
  void report_malformed(const char* name, const char* why);

  RingView outbound_;
  RingView inbound_;
  RingReader reader_;
  RingWriter writer_;
  ChannelCounters counters_;
};

}  // namespace mana::emu::vmbus
