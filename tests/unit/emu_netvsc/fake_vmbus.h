// SPDX-License-Identifier: BSD-3-Clause
// The VMBus half as NetvspHost's tests see it: channels that record what the host writes (and can
// be made full), guest memory with a receive buffer, a send buffer and guest pages, and hooks that
// record offers, transmitted frames and data-path switches.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "netvsc/host_interface.h"

namespace mana::emu::netvsc::test {

struct HostPacket {
  uint16_t type = 0;  // kPacketInband, kPacketCompletion or kPacketRxbuf
  uint64_t xact_id = 0;
  bool completion_requested = false;
  uint16_t xfer_pageset_id = 0;
  std::vector<RxbufRange> ranges;
  std::vector<uint8_t> body;
  uint32_t nvs_type() const;  // the first 4 bytes of the body, 0 when shorter
};

class FakeChannel : public HostChannel {
 public:
  bool send_inband(std::span<const uint8_t> body, uint64_t xact_id,
                   bool completion_requested) override;
  bool send_completion(std::span<const uint8_t> body, uint64_t xact_id) override;
  bool send_rxbuf(uint16_t xfer_pageset_id, std::span<const RxbufRange> ranges,
                  std::span<const uint8_t> body, uint64_t xact_id) override;
  std::deque<HostPacket> packets;  // what the guest has not read yet
  unsigned room = 1u << 30;        // packets the ring takes before it is full
};

class FakeMemory : public GuestMemory {
 public:
  static constexpr uint64_t kFirstPage = 0x100;  // guest pages kFirstPage ..
  FakeMemory(uint32_t rxbuf_len, uint32_t sendbuf_len, uint32_t guest_pages);
  uint32_t receive_buffer_gpadl() const override { return 0x1001; }
  std::span<uint8_t> receive_buffer() override { return rxbuf; }
  uint32_t send_buffer_gpadl() const override { return 0x1002; }
  std::span<uint8_t> send_buffer() override { return sendbuf; }
  std::span<uint8_t> guest_range(uint64_t page, uint32_t offset, uint32_t len) override;
  // Guest memory for a buffer of `len` bytes starting `offset` bytes into a fresh page.
  uint64_t alloc(uint32_t len, uint32_t offset = 0);  // returns the guest address
  uint8_t* at(uint64_t address) { return ram.data() + (address - kFirstPage * 4096); }
  std::vector<uint8_t> rxbuf, sendbuf, ram;
  uint64_t next = kFirstPage * 4096;
};

class FakeHooks : public NetvspHooks {
 public:
  explicit FakeHooks(unsigned max_channels) : channels(max_channels) {
    channels[0] = std::make_unique<FakeChannel>();
  }
  HostChannel* channel(unsigned index) override {
    return index < channels.size() ? channels[index].get() : nullptr;
  }
  unsigned offer_subchannels(unsigned count) override;
  void transmit_frame(std::span<const uint8_t> frame) override {
    frames.emplace_back(frame.begin(), frame.end());
  }
  void data_path_switched(bool to_vf) override { switches.push_back(to_vf); }
  FakeChannel& ch(unsigned i) { return *channels.at(i); }
  std::vector<std::unique_ptr<FakeChannel>> channels;
  unsigned offered = 0;
  std::vector<unsigned> offer_calls;
  std::vector<std::vector<uint8_t>> frames;
  std::vector<bool> switches;
};

}  // namespace mana::emu::netvsc::test
