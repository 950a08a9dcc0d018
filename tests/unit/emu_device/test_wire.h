// SPDX-License-Identifier: BSD-3-Clause
// A wire for device tests: frames the device transmits are captured per port, frames a test injects
// are what the device receives.
#pragma once

#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "wire/wire.h"

namespace mana::emu::test {

using Frame = std::vector<uint8_t>;

class TestWire final : public WireEndpoint {
 public:
  bool transmit(const uint8_t* frame, uint32_t len) override {
    if (!accept) return false;
    sent.emplace_back(frame, frame + len);
    return true;
  }
  uint32_t receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) override {
    if (incoming.empty()) return 0;
    Frame f = std::move(incoming.front());
    incoming.pop_front();
    const uint32_t len = static_cast<uint32_t>(f.size());
    *full_len = len;
    const uint32_t n = len < cap ? len : cap;
    std::memcpy(buf, f.data(), n);
    return n;
  }
  uint32_t peek() override {
    return incoming.empty() ? 0 : static_cast<uint32_t>(incoming.front().size());
  }

  bool accept = true;
  std::vector<Frame> sent;
  std::deque<Frame> incoming;
};

class TestWireSet final : public WireSet {
 public:
  explicit TestWireSet(unsigned ports) {
    for (unsigned i = 0; i < ports; ++i) wires.push_back(std::make_unique<TestWire>());
  }
  WireEndpoint* endpoint(unsigned port) override {
    return port < wires.size() ? wires[port].get() : nullptr;
  }
  std::vector<std::unique_ptr<TestWire>> wires;
};

}  // namespace mana::emu::test
