// SPDX-License-Identifier: BSD-3-Clause
// The device on a fabric wire (real shared memory, two ports of one VF): delivery by IP with the
// MACs rewritten, and flow control: frames wait on the fabric while the receiving port has no RX
// buffer posted, and a full receiving port holds the sender's SQ back instead of dropping.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>

#include "driver.h"
#include "frames.h"
#include "rx_common.h"
#include "wire/fabric_wire.h"

namespace mana::emu::test {
namespace {

uint32_t drain_tx_ok(CqRing& cq) {
  uint32_t ok = 0;
  while (const hw::Cqe* c = cq.next()) {
    EXPECT_EQ(c->type(), hw::kCqeTxOkay);
    ++ok;
  }
  return ok;
}

class FabricFlowTest : public ::testing::Test {
 protected:
  static VfConfig config() {
    VfConfig c = test_config(2);
    const std::string wire = "fabric:unit-dev-" + std::to_string(getpid());
    for (uint8_t i = 0; i < 2; ++i) {
      c.ports[i].wire = wire;
      c.ports[i].ipv4 = {198, 18, 3, static_cast<uint8_t>(i + 1)};
    }
    return c;
  }
  // From port 0 to port 1's IP, addressed to the gateway MAC (no peer MAC known).
  static std::vector<uint8_t> frame_to_port1(uint32_t seq) {
    FlowSpec f;
    f.src = {198, 18, 3, 1};
    f.dst = {198, 18, 3, 2};
    f.sport = 1000;
    f.dport = 2000;
    f.src_mac = port_mac(0);
    f.dst_mac = kAzureGatewayMac;
    std::vector<uint8_t> frame = build_frame(f);
    std::memcpy(frame.data() + frame.size() - 4, &seq, 4);
    return frame;
  }
  void send(uint32_t first, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) tx.post_frame(frame_to_port1(first + i));
    tx.doorbell();
  }
  void poll(unsigned passes = 8) {
    for (unsigned i = 0; i < passes; ++i) d.dev().poll();
  }

  Driver d{config(), 4 << 20, /*real_wires=*/true};
  TxQueue tx{d, 1, 8192, 256};
  RxSet rx{d, 2, 1, nullptr, 8192, 256};
};

TEST_F(FabricFlowTest, FramesWaitOnTheFabricUntilABufferIsPosted) {
  ASSERT_EQ(tx.status, 0);
  ASSERT_EQ(rx.status, 0);
  send(0, 3);
  poll();
  EXPECT_EQ(drain_tx_ok(tx.cq), 3u);
  EXPECT_EQ(d.dev().port_counters(1).rx_frames, 0u);  // held: no RX buffer posted yet
  EXPECT_EQ(d.dev().port_counters(1).rx_no_wqe_drops, 0u);
  rx.post(0, 3);
  rx.doorbell(0);
  poll();
  auto got = drain_rx(rx.queues[0]->cq);
  ASSERT_EQ(got.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].type, hw::kCqeRxOkay);
    const uint8_t* buf = rx.queues[0]->posted[i];
    EXPECT_EQ(std::memcmp(buf, port_mac(1).data(), 6), 0);
    EXPECT_EQ(std::memcmp(buf + 6, kAzureGatewayMac.data(), 6), 0);
    uint32_t seq;
    std::memcpy(&seq, buf + got[i].len[0] - 4, 4);
    EXPECT_EQ(seq, i);
  }
}

TEST_F(FabricFlowTest, FullReceiverHoldsTheSenderBackInsteadOfDropping) {
  ASSERT_EQ(tx.status, 0);
  uint32_t sent = 0;
  while (sent < kFabricRingCapacity) {  // fill port 1's ring: no RX buffer is posted
    send(sent, 128);
    sent += 128;
    poll();
    ASSERT_EQ(drain_tx_ok(tx.cq), 128u) << sent;
  }
  send(sent, 10);
  poll();
  EXPECT_EQ(drain_tx_ok(tx.cq), 0u);  // the 10 WQEs wait in the SQ
  EXPECT_EQ(d.dev().port_counters(0).tx_wire_drops, 0u);
  rx.post(0, 64);
  rx.doorbell(0);
  poll();
  EXPECT_EQ(drain_tx_ok(tx.cq), 10u);
  EXPECT_EQ(drain_rx(rx.queues[0]->cq).size(), 64u);
  EXPECT_EQ(d.dev().port_counters(0).tx_wire_drops, 0u);
}

}  // namespace
}  // namespace mana::emu::test
