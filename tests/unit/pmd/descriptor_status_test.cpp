// SPDX-License-Identifier: BSD-3-Clause
// rx_queue_count and the RX/TX descriptor status (doc/guide.md "Queues at run time") on fake rings:
// completed WQEs counted from the CQ's owner bits (okay, coalesced, zero-length and error
// completions, the rest of a CQE a burst carried over), nothing consumed or written.
#include <cstring>
#include <vector>

#include <rte_errno.h>

#include "burst.h"
#include "descriptor_status.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_rx_queue.h"
#include "fake_tx_queue.h"

namespace {

using namespace mana;

constexpr uint32_t kRing = 64;
constexpr uint32_t kRqId = 0x1234;

class RxDescriptorStatusTest : public mana_test::FakePort {
 protected:
  void SetUp() override {
    FakePort::SetUp();
    rxq_.start(state_);
  }
  void TearDown() override {
    rxq_.stop();
    FakePort::TearDown();
  }
  void complete(uint32_t type, std::vector<uint16_t> lengths) {
    rxq_.cq.produce([&](hw::Cqe& e) {
      e.dw[0] = type;
      for (size_t k = 0; k < lengths.size(); k++)
        e.rx_packet(static_cast<unsigned>(k)).dw0 = lengths[k];
      e.dw[15] = hw::Cqe::WqNum::set(0, kRqId);
    });
  }
  mana_test::FakeRxQueue rxq_{kRing, kRqId, 7, /*free_thresh=*/32};
  RxQueue& q_ = rxq_.q;
};

TEST_F(RxDescriptorStatusTest, CountsCompletedWqesWithoutConsumingThem) {
  EXPECT_EQ(rx_completed_wqes(q_, kRing), 0u);
  EXPECT_EQ(rx_desc_status(q_, 0), RTE_ETH_RX_DESC_AVAIL);
  complete(hw::kCqeRxOkay, {60});
  complete(hw::kCqeRxCoalesced4, {60, 70, 80});  // three WQEs
  complete(hw::kCqeRxOkay, {0});                 // zero length: no WQE
  complete(hw::kCqeRxTruncated, {});             // an error completion consumes its WQE
  const CompletionQueue cq_before = q_.cq;
  const WorkQueue rq_before = q_.rq;
  std::vector<uint8_t> ring_before(kRing * sizeof(hw::Cqe));
  std::memcpy(ring_before.data(), q_.cq.ring, ring_before.size());

  EXPECT_EQ(rx_completed_wqes(q_, kRing), 5u);
  EXPECT_EQ(rx_completed_wqes(q_, 2), 2u);
  EXPECT_EQ(rx_desc_status(q_, 0), RTE_ETH_RX_DESC_DONE);
  EXPECT_EQ(rx_desc_status(q_, 4), RTE_ETH_RX_DESC_DONE);
  EXPECT_EQ(rx_desc_status(q_, 5), RTE_ETH_RX_DESC_AVAIL);
  EXPECT_EQ(rx_desc_status(q_, kRing - 1), RTE_ETH_RX_DESC_AVAIL);
  EXPECT_EQ(rx_desc_status(q_, kRing), -EINVAL);
  // Read-only: the CQ head, the RQ indices and the CQ entries are as they were.
  EXPECT_EQ(q_.cq.head, cq_before.head);
  EXPECT_EQ(q_.rq.head_bu, rq_before.head_bu);
  EXPECT_EQ(q_.rq.tail_bu, rq_before.tail_bu);
  EXPECT_EQ(std::memcmp(ring_before.data(), q_.cq.ring, ring_before.size()), 0);
}

// A burst that takes 2 of a coalesced CQE's 4 packets carries the rest; consumed WQEs wait for
// the refill (free_thresh 32): they are not posted.
TEST_F(RxDescriptorStatusTest, CarriedCqeAndConsumedSlots) {
  complete(hw::kCqeRxCoalesced4, {60, 61, 62, 63});
  complete(hw::kCqeRxOkay, {64});
  const eth_rx_burst_t burst = select_rx_burst(0);
  rte_mbuf* pkts[2];
  ASSERT_EQ(burst(&q_, pkts, 2), 2);
  rte_pktmbuf_free_bulk(pkts, 2);
  ASSERT_NE(q_.partial_cqe, nullptr);
  EXPECT_EQ(rx_completed_wqes(q_, kRing), 3u);  // 2 carried + 1
  EXPECT_EQ(rx_desc_status(q_, 2), RTE_ETH_RX_DESC_DONE);
  EXPECT_EQ(rx_desc_status(q_, 3), RTE_ETH_RX_DESC_AVAIL);
  EXPECT_EQ(rx_desc_status(q_, kRing - 2), RTE_ETH_RX_DESC_UNAVAIL);  // not refilled yet
}

// The NIC wrote more completions than WQEs were posted (a broken CQ): the count stays within the
// posted WQEs.
TEST_F(RxDescriptorStatusTest, CountBoundedByPostedWqes) {
  for (uint32_t i = 0; i < kRing; i++) complete(hw::kCqeRxCoalesced4, {60, 60, 60, 60});
  EXPECT_EQ(rx_completed_wqes(q_, UINT32_MAX), kRing);
}

class TxDescriptorStatusTest : public mana_test::FakeTxPort {};

TEST_F(TxDescriptorStatusTest, FreeDescriptorsAreDoneOthersFull) {
  EXPECT_EQ(tx_desc_status(q_, 0), RTE_ETH_TX_DESC_DONE);
  EXPECT_EQ(tx_desc_status(q_, kRing - 1), RTE_ETH_TX_DESC_DONE);
  EXPECT_EQ(tx_desc_status(q_, kRing), -EINVAL);
  q_.desc_head = 10;  // ten packets the NIC has not completed (or the driver not reclaimed)
  q_.desc_tail = 0;
  EXPECT_EQ(tx_desc_status(q_, kRing - 11), RTE_ETH_TX_DESC_DONE);
  EXPECT_EQ(tx_desc_status(q_, kRing - 10), RTE_ETH_TX_DESC_FULL);
  EXPECT_EQ(tx_desc_status(q_, kRing - 1), RTE_ETH_TX_DESC_FULL);
  q_.desc_head = q_.desc_tail = 0;
}

// A queue id never set up: DPDK 22.11 (non-debug) passes its empty slot. Each op answers what
// DPDK's debug check would (doc/guide.md "Queues at run time") instead of reading through it.
TEST(NoQueueTest, FastPathOpsAnswerAsDpdkDocuments) {
  rte_eth_dev dev{};
  install_descriptor_ops(&dev);
  EXPECT_EQ(static_cast<int>(dev.rx_queue_count(nullptr)), -EINVAL);
  EXPECT_EQ(dev.rx_descriptor_status(nullptr, 0), -ENODEV);
  EXPECT_EQ(dev.tx_descriptor_status(nullptr, 0), -ENODEV);
  rte_mbuf* pkts[1] = {};
  rte_errno = 0;
  EXPECT_EQ(tx_prepare(nullptr, pkts, 1), 0);
  EXPECT_EQ(rte_errno, EINVAL);
  EXPECT_EQ(select_rx_burst(0)(nullptr, pkts, 1), 0);
  EXPECT_EQ(select_tx_burst(0)(nullptr, pkts, 1), 0);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
