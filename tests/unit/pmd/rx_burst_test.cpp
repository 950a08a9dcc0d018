// The RX burst on a fake queue (spec §4.4, §4.5, §4.7, §7): okay and coalesced completions (split
// across bursts), error completions recycled in place, mbuf exhaustion without holes, one doorbell.
#include <vector>

#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "rx_cqe.h"
#include "rx_queue.h"

namespace {

using namespace mana;
using mana_test::FakeCq;

constexpr uint32_t kRing = 64;
constexpr uint32_t kRqId = 0x1234;

class RxBurstTest : public mana_test::FakePort {
 protected:
  void SetUp() override {
    FakePort::SetUp();
    q_ = RxQueue{};
    q_.rq = WorkQueue{rq_mem_.p, static_cast<uint32_t>(rq_mem_.size - 1), kRing, 0, 0, kRqId};
    q_.cq = cq_.consumer(7);
    q_.mbufs = slots_;
    q_.desc_mask = kRing - 1;
    q_.buf_len = RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM;
    q_.port_id = mana_test::kFakePortId;
    q_.mp = pool_;
    q_.priv = &priv_;
    mr_queue_cache_reset(q_.mr);
    for (uint32_t i = 0; i < kRing; i++) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      ASSERT_NE(m, nullptr);
      post_rx_buffer(q_, m, rx_buffer_lkey(q_, m, pp_.registrar));
    }
    burst_ = select_rx_burst(RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH);
  }
  void TearDown() override {
    for (rte_mbuf* m : slots_) rte_pktmbuf_free(m);
    FakePort::TearDown();
  }

  // The NIC: the buffer address of the RQ WQE with index `wqe` (every RX WQE is one BU).
  uint64_t wqe_buffer(uint32_t wqe) const {
    hw::Sge sge;
    std::memcpy(&sge, rq_mem_.p + ((wqe * 32 + 16) & (rq_mem_.size - 1)), sizeof(sge));
    EXPECT_EQ(sge.mem_key, mana_test::kFakeLkey);
    EXPECT_EQ(sge.size, q_.buf_len);
    return sge.address;
  }
  void complete(uint32_t type, std::vector<uint16_t> lengths, uint32_t dw1 = 0) {
    cq_.produce([&](hw::Cqe& e) {
      e.dw[0] = type;
      e.dw[1] = dw1;
      for (size_t k = 0; k < lengths.size(); k++) {
        e.rx_packet(static_cast<unsigned>(k)).dw0 = lengths[k];
        e.rx_packet(static_cast<unsigned>(k)).packet_hash = 0xABC0u + lengths[k];
      }
      e.dw[15] = hw::Cqe::WqNum::set(0, kRqId);
    });
  }
  uint16_t rx(rte_mbuf** pkts, uint16_t n) { return burst_(&q_, pkts, n); }

  mana_test::AlignedMemory rq_mem_{4096};
  FakeCq cq_{kRing};
  rte_mbuf* slots_[kRing] = {};
  RxQueue q_{};
  eth_rx_burst_t burst_ = nullptr;
};

TEST_F(RxBurstTest, OkayCompletionsDeliverInOrderAndRefill) {
  const uint64_t first = wqe_buffer(0), second = wqe_buffer(1);
  const unsigned used_before = in_use();
  complete(hw::kCqeRxOkay, {60}, hw::Cqe::RxHashType::set(1u << 25 | 1u << 29, hw::kHashUdpIpv4));
  complete(hw::kCqeRxOkay, {1514});
  rte_mbuf* pkts[32];
  ASSERT_EQ(rx(pkts, 32), 2);
  EXPECT_EQ(rte_pktmbuf_mtod(pkts[0], uintptr_t), first);
  EXPECT_EQ(rte_pktmbuf_mtod(pkts[1], uintptr_t), second);
  EXPECT_EQ(pkts[0]->pkt_len, 60u);
  EXPECT_EQ(pkts[0]->data_len, 60u);
  EXPECT_EQ(pkts[1]->pkt_len, 1514u);
  EXPECT_EQ(pkts[0]->ol_flags,
            RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD | RTE_MBUF_F_RX_RSS_HASH);
  EXPECT_EQ(pkts[0]->hash.rss, 0xABC0u + 60);
  EXPECT_EQ(pkts[0]->packet_type,
            RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN | RTE_PTYPE_L4_UDP);
  EXPECT_EQ(pkts[1]->ol_flags, 0u);
  // Two fresh buffers were posted behind the ring, announced by one doorbell.
  EXPECT_EQ(q_.rq.head_bu, kRing + 2);
  EXPECT_EQ(doorbell(hw::kRqDoorbellOffset), hw::rq_doorbell(kRqId, (kRing + 2) * 32));
  EXPECT_NE(wqe_buffer(kRing), first);
  EXPECT_EQ(in_use(), used_before + 2);  // the two delivered mbufs, the ring stays full
  EXPECT_EQ(q_.stats.packets, 2u);
  EXPECT_EQ(q_.stats.bytes, 1574u);
  rte_pktmbuf_free_bulk(pkts, 2);
  EXPECT_EQ(rx(pkts, 32), 0);  // nothing more
}

TEST_F(RxBurstTest, CoalescedCompletionSplitAcrossBursts) {
  complete(hw::kCqeRxCoalesced4, {100, 101, 102, 103});
  complete(hw::kCqeRxCoalesced4, {104, 105});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 3), 3);
  std::vector<uint32_t> lens;
  for (int i = 0; i < 3; i++) lens.push_back(pkts[i]->pkt_len);
  rte_pktmbuf_free_bulk(pkts, 3);
  ASSERT_EQ(rx(pkts, 8), 3);
  for (int i = 0; i < 3; i++) lens.push_back(pkts[i]->pkt_len);
  rte_pktmbuf_free_bulk(pkts, 3);
  EXPECT_EQ(lens, (std::vector<uint32_t>{100, 101, 102, 103, 104, 105}));
  EXPECT_EQ(q_.rq.tail_bu, 6u);
  EXPECT_EQ(q_.rq.head_bu, kRing + 6);
  EXPECT_EQ(q_.partial_cqe, nullptr);
}

TEST_F(RxBurstTest, ErrorCompletionRecyclesTheBufferInPlace) {
  const uint64_t bad = wqe_buffer(1);
  complete(hw::kCqeRxOkay, {64});
  complete(hw::kCqeRxTruncated, {});
  complete(hw::kCqeRxObjectFence, {});
  complete(hw::kCqeRxOkay, {65});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 8), 2);
  EXPECT_EQ(pkts[0]->pkt_len, 64u);
  EXPECT_EQ(pkts[1]->pkt_len, 65u);
  rte_pktmbuf_free_bulk(pkts, 2);
  EXPECT_EQ(q_.stats.errors, 2u);
  EXPECT_EQ(q_.stats.cqe_errors[2], 1u);  // truncated
  EXPECT_EQ(q_.stats.cqe_errors[1], 1u);  // object fence
  EXPECT_EQ(wqe_buffer(kRing + 1), bad);  // same buffer, reposted
  EXPECT_EQ(q_.rq.head_bu, kRing + 4);
}

TEST_F(RxBurstTest, NoMbufsDropsThePacketAndKeepsTheRingFull) {
  std::vector<rte_mbuf*> hoard;
  while (rte_mbuf* m = rte_pktmbuf_alloc(pool_)) hoard.push_back(m);
  const uint64_t a = wqe_buffer(0), b = wqe_buffer(1);
  complete(hw::kCqeRxOkay, {64});
  complete(hw::kCqeRxOkay, {64});
  rte_mbuf* pkts[8];
  EXPECT_EQ(rx(pkts, 8), 0);
  EXPECT_EQ(q_.stats.nombuf, 2u);
  EXPECT_EQ(wqe_buffer(kRing), a);  // the old buffers went back into the ring
  EXPECT_EQ(wqe_buffer(kRing + 1), b);
  for (rte_mbuf* m : slots_) EXPECT_NE(m, nullptr);
  EXPECT_EQ(q_.rq.head_bu - q_.rq.tail_bu, kRing);
  rte_pktmbuf_free_bulk(hoard.data(), static_cast<unsigned>(hoard.size()));
  complete(hw::kCqeRxOkay, {66});
  ASSERT_EQ(rx(pkts, 8), 1);
  EXPECT_EQ(pkts[0]->pkt_len, 66u);
  rte_pktmbuf_free(pkts[0]);
}

TEST_F(RxBurstTest, VlanInfoAndManyWraps) {
  // Several laps of the CQ and RQ with a VLAN-tagged packet each time.
  const uint32_t dw1 = hw::Cqe::RxVlanPresent::set(hw::Cqe::RxVlanId::set(0, 0x123), 1);
  rte_mbuf* pkts[32];
  for (uint32_t i = 0; i < 10 * kRing; i += 16) {
    for (int k = 0; k < 4; k++) complete(hw::kCqeRxCoalesced4, {70, 71, 72, 73}, dw1);
    ASSERT_EQ(rx(pkts, 32), 16) << i;
    for (int k = 0; k < 16; k++) {
      EXPECT_TRUE(pkts[k]->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED);
      EXPECT_EQ(pkts[k]->vlan_tci, 0x123);
      EXPECT_EQ(pkts[k]->pkt_len, 70u + k % 4);
    }
    rte_pktmbuf_free_bulk(pkts, 16);
  }
  EXPECT_EQ(q_.stats.packets, 10u * kRing);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
