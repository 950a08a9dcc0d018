// SPDX-License-Identifier: BSD-3-Clause
// A NetvspHost on fake VMBus objects with a DPDK-like guest (dpdk_guest.h).
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "dpdk_guest.h"
#include "fake_vmbus.h"
#include "netvsc/netvsp_host.h"

namespace mana::emu::netvsc::test {

class HostTest : public ::testing::Test {
 protected:
  static constexpr std::array<uint8_t, 6> kMac = {0x02, 0x15, 0x5d, 0x00, 0x00, 0x01};
  static constexpr uint32_t kRxbufLen = 2u << 20;
  HostTest() {
    config.mac = kMac;
    config.max_queues = 8;
  }
  void start() {
    host = std::make_unique<NetvspHost>(config, mem, hooks);
    guest = std::make_unique<DpdkGuest>(*host, mem, hooks);
  }
  // Probe, then the start of the port (packet filter DIRECTED | ALL_MULTICAST | BROADCAST).
  void start_and_probe() {
    start();
    ASSERT_EQ(guest->probe(), config.max_nvsp_version);
    const uint32_t filter = 0x0D;
    ASSERT_TRUE(guest->rndis_set(0x0001010E, {reinterpret_cast<const uint8_t*>(&filter), 4}));
  }
  NetvspConfig config;
  FakeMemory mem{kRxbufLen, 1u << 20, 512};
  FakeHooks hooks{8};
  std::unique_ptr<NetvspHost> host;
  std::unique_ptr<DpdkGuest> guest;
};

}  // namespace mana::emu::netvsc::test
