// SPDX-License-Identifier: BSD-3-Clause
// The TX burst on a fake queue (doc/hardware.md §4.2, §4.3, §4.9, §4.10, §7): CQE suppression on
// all but the last WQE, completion by okay and error CQEs, stop at the first unsendable packet,
// offload OOBs.
#include <cerrno>
#include <cstring>
#include <vector>

#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_tx_queue.h"

namespace {

using namespace mana;
using mana_test::FakeCq;

constexpr uint32_t kRing = mana_test::FakeTxPort::kRing;
constexpr uint32_t kSqId = mana_test::FakeTxPort::kSqId;
constexpr uint32_t kCqId = mana_test::FakeTxPort::kCqId;

class TxBurstTest : public mana_test::FakeTxPort {
 protected:
  rte_mbuf* packet(uint16_t len = 64, unsigned segs = 1) {
    rte_mbuf* head = nullptr;
    for (unsigned s = 0; s < segs; s++) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      EXPECT_NE(m, nullptr);
      EXPECT_NE(rte_pktmbuf_append(m, len), nullptr);
      if (head == nullptr)
        head = m;
      else
        EXPECT_EQ(rte_pktmbuf_chain(head, m), 0);
    }
    return head;
  }
  // The NIC's view of the WQE starting at basic unit `bu`.
  hw::WqeHeader header_at(uint32_t bu) const {
    hw::WqeHeader h;
    std::memcpy(&h, txq_.sq_ring() + ((bu * 32) & txq_.sq_ring_mask()), sizeof(h));
    return h;
  }
  hw::TxShortOob oob_at(uint32_t bu) const {
    hw::TxShortOob o;
    std::memcpy(&o, txq_.sq_ring() + ((bu * 32 + 8) & txq_.sq_ring_mask()), sizeof(o));
    return o;
  }
  // A CQE whose tx_wqe_offset field holds `wqe_offset` (0 where a test does not care).
  void complete(uint32_t type, uint32_t wqe_offset = 0) {
    cq_.produce([&](hw::Cqe& e) {
      e.dw[0] = hw::Cqe::ClientType::set(type, hw::kClientTypeCompletion);
      e.dw[hw::Cqe::kTxWqeOffsetDword] = hw::Cqe::TxWqeOffset::set(0, wqe_offset);
      e.dw[15] = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kSqId), 1);
    });
  }
  // Sends a burst of `n` one-BU packets; returns the BU position of its first WQE.
  uint32_t burst_of(unsigned n) {
    std::vector<rte_mbuf*> pkts;
    for (unsigned i = 0; i < n; i++) pkts.push_back(packet());
    const uint32_t first = q_.sq.head_bu;
    EXPECT_EQ(tx(plain_, pkts), n);
    return first;
  }
  // An IPv4/UDP or IPv6/TCP frame of `len` bytes with `l2` bytes of L2 header, offload flags set.
  rte_mbuf* l4_packet(bool v6, uint16_t len = 80, uint16_t l2 = 14) {
    rte_mbuf* m = packet(len);
    uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
    std::memset(d, 0, len);
    if (v6) {
      auto* ip = reinterpret_cast<rte_ipv6_hdr*>(d + l2);
      ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
      ip->payload_len = rte_cpu_to_be_16(static_cast<uint16_t>(len - l2 - 40));
      ip->proto = IPPROTO_TCP;
      // (byte arrays until DPDK 24.11, struct rte_ipv6_addr since)
      reinterpret_cast<uint8_t*>(&ip->src_addr)[0] = 0x20;
      reinterpret_cast<uint8_t*>(&ip->dst_addr)[15] = 0x02;
      m->l3_len = 40;
      m->ol_flags = RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM;
    } else {
      auto* ip = reinterpret_cast<rte_ipv4_hdr*>(d + l2);
      ip->version_ihl = 0x45;
      ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(len - l2));
      ip->next_proto_id = IPPROTO_UDP;
      ip->src_addr = rte_cpu_to_be_32(0xC6120001);
      ip->dst_addr = rte_cpu_to_be_32(0xC6120002);
      m->l3_len = 20;
      m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
    }
    m->l2_len = l2;
    return m;
  }
  uint16_t& l4_field(rte_mbuf* m) {
    const bool tcp = (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) == RTE_MBUF_F_TX_TCP_CKSUM;
    return *rte_pktmbuf_mtod_offset(m, uint16_t*, m->l2_len + m->l3_len + (tcp ? 16 : 6));
  }
  uint16_t seed_of(rte_mbuf* m) {
    if (m->ol_flags & RTE_MBUF_F_TX_IPV4)
      return rte_ipv4_phdr_cksum(rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, m->l2_len), m->ol_flags);
    return rte_ipv6_phdr_cksum(rte_pktmbuf_mtod_offset(m, rte_ipv6_hdr*, m->l2_len), m->ol_flags);
  }
  uint16_t prepare(std::vector<rte_mbuf*>& pkts) {
    rte_errno = 0;
    return tx_prepare(&q_, pkts.data(), static_cast<uint16_t>(pkts.size()));
  }
  uint16_t tx(eth_tx_burst_t burst, std::vector<rte_mbuf*>& pkts) {
    return burst(&q_, pkts.data(), static_cast<uint16_t>(pkts.size()));
  }

  eth_tx_burst_t plain_ = select_tx_burst(0);
};

// A stopped queue (gate closed): the burst reclaims nothing, posts nothing, rings nothing.
TEST_F(TxBurstTest, ClosedGateTouchesNothing) {
  std::vector<rte_mbuf*> pkts{packet(60)};
  ASSERT_EQ(tx(plain_, pkts), 1);
  complete(hw::kCqeTxOkay);
  const uint64_t sq_doorbell = doorbell(hw::kSqDoorbellOffset);
  ASSERT_TRUE(gate_close(q_.gate, 10));
  std::vector<rte_mbuf*> more{packet(61)};
  EXPECT_EQ(tx(plain_, more), 0);
  EXPECT_EQ(q_.desc_tail, 0u);  // the completion was not consumed
  EXPECT_EQ(doorbell(hw::kSqDoorbellOffset), sq_doorbell);
  gate_open(q_.gate);
  EXPECT_EQ(tx(plain_, more), 1);
  EXPECT_EQ(q_.desc_tail, 1u);
  EXPECT_EQ(q_.gate.busy, 0u);
  complete(hw::kCqeTxOkay);
  EXPECT_EQ(tx_reclaim(q_), 1u);
}

// A CQE naming another SQ, an RQ (is_sq 0) or another client type is not ours (the kernel's
// mana_poll_tx_cq checks is_sq and client_type, doc/hardware.md §4.7): it completes nothing and
// is counted; our own CQE after it completes the burst.
TEST_F(TxBurstTest, CompletionForAnotherQueueCompletesNothing) {
  burst_of(3);
  const auto foreign = [&](uint32_t dw0, uint32_t dw15) {
    cq_.produce([&](hw::Cqe& e) {
      e.dw[0] = dw0;
      e.dw[hw::Cqe::kOwnerDword] = dw15;
    });
  };
  const uint32_t okay = hw::Cqe::ClientType::set(hw::kCqeTxOkay, hw::kClientTypeCompletion);
  foreign(okay, hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kSqId + 1), 1));        // another SQ
  foreign(okay, hw::Cqe::WqNum::set(0, kSqId));                                   // an RQ's
  foreign(hw::kCqeTxOkay, hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kSqId), 1));  // client type 0
  EXPECT_EQ(tx_reclaim(q_), 0u);
  EXPECT_EQ(q_.stats.misdirected_cqes, 3u);
  EXPECT_EQ(q_.stats.errors, 0u);
  EXPECT_EQ(q_.cq.head, kRing + 3);  // taken off the CQ
  EXPECT_EQ(q_.desc_head - q_.desc_tail, 3u);
  complete(hw::kCqeTxOkay, 2);
  EXPECT_EQ(tx_reclaim(q_), 3u);
}

TEST_F(TxBurstTest, AllButTheLastWqeSuppressTheirCqe) {
  std::vector<rte_mbuf*> pkts;
  for (int i = 0; i < 5; i++) pkts.push_back(packet(60 + i));
  const unsigned used = in_use();
  ASSERT_EQ(tx(plain_, pkts), 5);
  for (uint32_t i = 0; i < 5; i++) {
    EXPECT_EQ(header_at(i).num_sge(), 1u);
    EXPECT_EQ(hw::TxShortOob::SuppressCqe::get(oob_at(i).dw0), i < 4 ? 1u : 0u) << i;
    EXPECT_EQ(hw::TxShortOob::VcqNumber::get(oob_at(i).dw0), kCqId);
  }
  EXPECT_EQ(doorbell(hw::kSqDoorbellOffset), hw::sq_doorbell(kSqId, 5 * 32));
  EXPECT_EQ(q_.stats.packets, 5u);
  EXPECT_EQ(q_.stats.bytes, 60u + 61 + 62 + 63 + 64);
  EXPECT_EQ(in_use(), used);  // the NIC owns them until completion

  complete(hw::kCqeTxOkay);  // one CQE completes the whole burst
  EXPECT_EQ(tx_reclaim(q_), 5u);
  EXPECT_EQ(in_use(), used - 5);
  EXPECT_EQ(q_.sq.tail_bu, q_.sq.head_bu);
}

TEST_F(TxBurstTest, ErrorCqeOfASuppressedWqeIsCountedAndEverythingIsFreed) {
  std::vector<rte_mbuf*> pkts{packet(), packet(), packet()};
  const unsigned used = in_use();
  ASSERT_EQ(tx(plain_, pkts), 3);
  complete(hw::kCqeTxMtuDrop);  // the second (suppressed) WQE failed
  complete(hw::kCqeTxOkay);     // the last one completes the rest
  EXPECT_EQ(tx_reclaim(q_), 3u);
  EXPECT_EQ(q_.stats.errors, 1u);
  EXPECT_EQ(q_.stats.cqe_errors[hw::kCqeTxMtuDrop - hw::kCqeTxSaDrop], 1u);
  EXPECT_EQ(in_use(), used - 3);
}

// The NIC reports where the SQ got to in tx_wqe_offset (basic units or bytes: doc/hardware.md
// §4.7); an error CQE for the last WQE of a burst is the only CQE of that burst.
class TxErrorAtBurstEnd : public TxBurstTest, public ::testing::WithParamInterface<uint32_t> {
 protected:
  uint32_t field(uint32_t bu) const { return bu * GetParam(); }  // GetParam: bytes per unit
};

TEST_P(TxErrorAtBurstEnd, CompletesTheWholeBurst) {
  const unsigned used = in_use();
  uint32_t at = burst_of(4);
  complete(hw::kCqeTxOkay, field(at + 3));
  EXPECT_EQ(tx_reclaim(q_), 4u);
  at = burst_of(4);
  complete(hw::kCqeTxSaDrop, field(at + 3));  // the last (unsuppressed) WQE failed
  EXPECT_EQ(tx_reclaim(q_), 4u);
  EXPECT_EQ(in_use(), used);
  EXPECT_EQ(q_.desc_tail, q_.desc_head);
  EXPECT_EQ(q_.sq.tail_bu, q_.sq.head_bu);
  EXPECT_EQ(q_.stats.errors, 1u);
}

TEST_P(TxErrorAtBurstEnd, ErrorsInTheMiddleAndAtTheEnd) {
  const unsigned used = in_use();
  const uint32_t at = burst_of(8);
  complete(hw::kCqeTxMtuDrop, field(at + 3));
  complete(hw::kCqeTxMtuDrop, field(at + 7));
  EXPECT_EQ(tx_reclaim(q_), 8u);
  EXPECT_EQ(in_use(), used);
  EXPECT_EQ(q_.stats.errors, 2u);
}

TEST_P(TxErrorAtBurstEnd, FirstBurstOfTheQueueFailsAtItsEnd) {
  // No okay CQE yet to learn the unit from: the reading that points into the burst decides.
  const unsigned used = in_use();
  burst_of(1);  // at ring position 0, where both readings agree
  complete(hw::kCqeTxSaDrop, 0);
  const uint32_t at = burst_of(5);  // its reclaim completes the first
  complete(hw::kCqeTxSaDrop, field(at + 4));
  EXPECT_EQ(tx_reclaim(q_), 5u);
  EXPECT_EQ(in_use(), used);
}

TEST_P(TxErrorAtBurstEnd, NoDescriptorStaysHeldOverManyLaps) {
  const unsigned used = in_use();
  for (int lap = 0; lap < 40; lap++) {
    const uint32_t at = burst_of(31);
    if (lap % 3 == 1) complete(hw::kCqeTxSaDrop, field(at + 10));
    complete(lap % 2 ? hw::kCqeTxSaDrop : hw::kCqeTxOkay, field(at + 30));
    // Reclaimed at the next burst, as an application that keeps sending sees it.
  }
  tx_reclaim(q_);
  EXPECT_EQ(in_use(), used);
  EXPECT_EQ(q_.desc_tail, q_.desc_head);
}

TEST_P(TxErrorAtBurstEnd, WqesOfSeveralBasicUnits) {
  // Two segments: 2-BU WQEs, so the WQE named is found by walking the sizes.
  const unsigned used = in_use();
  const eth_tx_burst_t multi = select_tx_burst(RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
  std::vector<rte_mbuf*> pkts{packet(64, 2), packet(64, 2), packet(64, 2)};
  ASSERT_EQ(tx(multi, pkts), 3);
  complete(hw::kCqeTxOkay, field(4));  // learns the unit
  EXPECT_EQ(tx_reclaim(q_), 3u);
  std::vector<rte_mbuf*> more{packet(64, 2), packet(64, 2), packet(64, 2)};
  ASSERT_EQ(tx(multi, more), 3);
  complete(hw::kCqeTxSaDrop, field(8));   // the second WQE of the burst
  complete(hw::kCqeTxSaDrop, field(10));  // and the last
  EXPECT_EQ(tx_reclaim(q_), 3u);
  EXPECT_EQ(in_use(), used);
}

INSTANTIATE_TEST_SUITE_P(Unit, TxErrorAtBurstEnd, ::testing::Values(1u, 32u),
                         [](const auto& p) { return p.param == 1 ? "BasicUnits" : "Bytes"; });

TEST_F(TxBurstTest, WqeOffsetOutsideTheOldestBatchCompletesOnlyInOrder) {
  // A field that names no outstanding WQE (or one past the oldest batch) is not trusted: an error
  // CQE then completes the oldest descriptor, an okay CQE the oldest batch.
  const unsigned used = in_use();
  burst_of(3);
  const uint32_t next = burst_of(3);
  complete(hw::kCqeTxSaDrop, next + 2);  // names the second burst's end before the first completed
  EXPECT_EQ(tx_reclaim(q_), 1u);
  complete(hw::kCqeTxOkay, 100);  // names nothing outstanding
  EXPECT_EQ(tx_reclaim(q_), 2u);
  complete(hw::kCqeTxOkay, next + 2);
  EXPECT_EQ(tx_reclaim(q_), 3u);
  EXPECT_EQ(in_use(), used);
}

TEST_F(TxBurstTest, FullRingStopsTheBurstAndCounts) {
  std::vector<rte_mbuf*> pkts;
  for (uint32_t i = 0; i < kRing + 8; i++) pkts.push_back(packet());
  ASSERT_EQ(tx(plain_, pkts), kRing);
  EXPECT_EQ(q_.stats.ring_full, 1u);
  std::vector<rte_mbuf*> rest(pkts.begin() + kRing, pkts.end());
  EXPECT_EQ(tx(plain_, rest), 0);  // nothing completed yet
  complete(hw::kCqeTxOkay);
  EXPECT_EQ(tx(plain_, rest), 8);  // the completion made room
}

TEST_F(TxBurstTest, TooManySegmentsStopsAtThatPacket) {
  std::vector<rte_mbuf*> pkts{packet(), packet(64, 2), packet()};
  EXPECT_EQ(tx(plain_, pkts), 1);  // single-segment burst function: 2 segments refused
  EXPECT_EQ(q_.stats.too_many_segs, 1u);
  const eth_tx_burst_t multi = select_tx_burst(RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
  std::vector<rte_mbuf*> rest{pkts[1], pkts[2], packet(32, 16)};
  EXPECT_EQ(tx(multi, rest), 2);  // 16 segments > max_sge 15
  EXPECT_EQ(q_.stats.too_many_segs, 2u);
  EXPECT_EQ(header_at(1).num_sge(), 2u);
  EXPECT_EQ(q_.sq.head_bu, 1u + 2 + 1);  // 1 + 2 (two SGEs) + 1 basic units
  rte_pktmbuf_free(rest[2]);
}

TEST_F(TxBurstTest, ChecksumOffloadSeedsThePseudoHeaderSum) {
  rte_mbuf* m = packet(14 + 20 + 8 + 18);
  auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, 14);
  std::memset(ip, 0, 20);
  ip->version_ihl = 0x45;
  ip->total_length = rte_cpu_to_be_16(20 + 8 + 18);
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(0xC6120001);
  ip->dst_addr = rte_cpu_to_be_32(0xC6120002);
  auto* udp = rte_pktmbuf_mtod_offset(m, rte_udp_hdr*, 34);
  udp->dgram_cksum = 0xFFFF;
  m->l2_len = 14;
  m->l3_len = 20;
  m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
  const uint16_t expected = rte_ipv4_phdr_cksum(ip, m->ol_flags);
  const eth_tx_burst_t csum =
      select_tx_burst(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
  std::vector<rte_mbuf*> pkts{m};
  ASSERT_EQ(tx(csum, pkts), 1);
  EXPECT_EQ(udp->dgram_cksum, expected);
  const hw::TxShortOob o = oob_at(0);
  EXPECT_EQ(hw::TxShortOob::IsIpv4::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::IpCsum::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::UdpCsum::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::TcpCsum::get(o.dw0), 0u);

  // Without the offload flags nothing in the packet changes.
  rte_mbuf* plain = packet(60);
  std::memset(rte_pktmbuf_mtod(plain, void*), 0x5A, 60);
  plain->l2_len = 14;
  plain->l3_len = 20;
  std::vector<rte_mbuf*> more{plain};
  ASSERT_EQ(tx(csum, more), 1);
  for (int i = 0; i < 60; i++) ASSERT_EQ(rte_pktmbuf_mtod(plain, uint8_t*)[i], 0x5A);
}

TEST_F(TxBurstTest, VlanInsertUsesTheLongOob) {
  rte_mbuf* m = packet();
  m->ol_flags = RTE_MBUF_F_TX_VLAN;
  m->vlan_tci = (5 << 13) | 0x064;
  const eth_tx_burst_t vlan = select_tx_burst(RTE_ETH_TX_OFFLOAD_VLAN_INSERT);
  std::vector<rte_mbuf*> pkts{m, packet()};
  ASSERT_EQ(tx(vlan, pkts), 2);
  EXPECT_EQ(header_at(0).oob_bytes(), 24u);
  EXPECT_EQ(hw::TxShortOob::Format::get(oob_at(0).dw0), 1u);
  uint32_t dw2;
  std::memcpy(&dw2, txq_.sq_ring() + 16, 4);
  EXPECT_EQ(hw::TxLongOob::InjectVlan::get(dw2), 1u);
  EXPECT_EQ(hw::TxLongOob::Pcp::get(dw2), 5u);
  EXPECT_EQ(hw::TxLongOob::Vid::get(dw2), 0x064u);
  EXPECT_EQ(header_at(2).oob_bytes(), 8u);  // the second packet: short OOB after 2 basic units
  EXPECT_EQ(q_.sq.head_bu, 3u);
}

// doc/hardware.md §4.3: a vPort offset above 255 makes every WQE of the queue carry the long OOB
// with the 12-bit offset (2 basic units each); the ring-full check counts those units.
TEST_F(TxBurstTest, LongVportOffsetMakesEveryWqeLong) {
  q_.oob = make_tx_oob_template(kCqId, kSqId, 300);
  q_.sq.capacity_bu = 64;  // room for 32 such WQEs
  std::vector<rte_mbuf*> pkts;
  for (int i = 0; i < 40; i++) pkts.push_back(packet());
  ASSERT_EQ(tx(select_tx_burst(0, true), pkts), 32);
  EXPECT_EQ(q_.stats.ring_full, 1u);
  EXPECT_EQ(q_.sq.head_bu, 64u);
  for (uint32_t bu = 0; bu < 64; bu += 2) {
    EXPECT_EQ(header_at(bu).oob_bytes(), 24u) << bu;
    EXPECT_EQ(hw::TxShortOob::Format::get(oob_at(bu).dw0), 1u) << bu;
    EXPECT_EQ(hw::TxShortOob::VportOffset::get(oob_at(bu).dw1), 0u) << bu;
    uint32_t dw3;
    std::memcpy(&dw3, txq_.sq_ring() + bu * 32 + 8 + 12, 4);
    EXPECT_EQ(hw::TxLongOob::LongVportOffset::get(dw3), 300u) << bu;
  }
  // A VLAN tag on such a queue keeps the offset.
  complete(hw::kCqeTxOkay);
  rte_mbuf* tagged = packet();
  tagged->ol_flags = RTE_MBUF_F_TX_VLAN;
  tagged->vlan_tci = 7;
  std::vector<rte_mbuf*> one{tagged};
  ASSERT_EQ(tx(select_tx_burst(RTE_ETH_TX_OFFLOAD_VLAN_INSERT, true), one), 1);
  uint32_t dw2, dw3;
  std::memcpy(&dw2, txq_.sq_ring() + 64 * 32 + 8 + 8, 4);
  std::memcpy(&dw3, txq_.sq_ring() + 64 * 32 + 8 + 12, 4);
  EXPECT_EQ(hw::TxLongOob::Vid::get(dw2), 7u);
  EXPECT_EQ(hw::TxLongOob::LongVportOffset::get(dw3), 300u);
  for (size_t i = 32; i < pkts.size(); i++) rte_pktmbuf_free(pkts[i]);
}

// The port's burst function is chosen from its queues' templates: a long one gets the variant that
// sends long OOBs (the all-short variant would truncate the offset again).
TEST_F(TxBurstTest, PortBurstFollowsTheQueuesOobFormat) {
  q_.oob = make_tx_oob_template(kCqId, kSqId, 300);
  void* queues[1] = {&q_};
  rte_eth_dev_data data{};
  data.tx_queues = queues;
  data.nb_tx_queues = 1;
  rte_eth_dev dev{};
  dev.data = &data;
  std::vector<rte_mbuf*> pkts{packet()};
  ASSERT_EQ(tx(select_port_tx_burst(&dev), pkts), 1);
  EXPECT_EQ(header_at(0).oob_bytes(), 24u);
  EXPECT_EQ(q_.sq.head_bu, 2u);
}

// doc/hardware.md §4.5: an unarmed CQ doorbell once 4 wraps' worth of TX CQEs were consumed.
TEST_F(TxBurstTest, UnarmedCqDoorbellEveryFourWraps) {
  unsigned doorbells = 0;
  uint64_t last = doorbell(hw::kCqDoorbellOffset);
  for (uint32_t consumed = 1; consumed <= 9 * kRing; consumed++) {
    std::vector<rte_mbuf*> pkts{packet()};
    ASSERT_EQ(tx(plain_, pkts), 1);
    complete(hw::kCqeTxOkay);
    tx_reclaim(q_);
    const uint64_t now = doorbell(hw::kCqDoorbellOffset);
    if (now != last) {
      doorbells++;
      EXPECT_EQ(consumed % (4 * kRing), 0u) << consumed;
      EXPECT_EQ(now, hw::cq_doorbell(kCqId, (kRing + consumed) & (8 * kRing - 1), false));
      last = now;
    }
  }
  EXPECT_EQ(doorbells, 2u);
}

// rte_eth_tx_prepare: seeds, and refuses what the NIC cannot do with rte_errno set.
TEST_F(TxBurstTest, PrepareSeedsAndValidates) {
  rte_mbuf* udp4 = l4_packet(false);
  rte_mbuf* tcp6 = l4_packet(true);
  std::vector<rte_mbuf*> good{udp4, tcp6};
  ASSERT_EQ(prepare(good), 2);
  EXPECT_EQ(l4_field(udp4), seed_of(udp4));
  EXPECT_EQ(l4_field(tcp6), seed_of(tcp6));

  struct Case {
    const char* what;
    void (*spoil)(rte_mbuf*);
    int err;
  };
  const Case cases[] = {
      {"L4 checksum without IP version", [](rte_mbuf* m) { m->ol_flags &= ~RTE_MBUF_F_TX_IPV4; },
       EINVAL},
      {"both IP versions", [](rte_mbuf* m) { m->ol_flags |= RTE_MBUF_F_TX_IPV6; }, EINVAL},
      {"IP checksum on IPv6",
       [](rte_mbuf* m) {
         m->ol_flags = RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_IP_CKSUM;
         m->l3_len = 40;
       },
       EINVAL},
      {"no L2 length", [](rte_mbuf* m) { m->l2_len = 0; }, EINVAL},
      {"IPv4 header too short", [](rte_mbuf* m) { m->l3_len = 8; }, EINVAL},
      {"TSO", [](rte_mbuf* m) { m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG; }, ENOTSUP},
      {"SCTP checksum",
       [](rte_mbuf* m) {
         m->ol_flags = (m->ol_flags & ~RTE_MBUF_F_TX_L4_MASK) | RTE_MBUF_F_TX_SCTP_CKSUM;
       },
       ENOTSUP},
  };
  for (const Case& c : cases) {
    rte_mbuf* bad = l4_packet(false);
    c.spoil(bad);
    std::vector<rte_mbuf*> pkts{udp4, bad, tcp6};
    EXPECT_EQ(prepare(pkts), 1) << c.what;
    EXPECT_EQ(rte_errno, c.err) << c.what;
    rte_pktmbuf_free(bad);
  }
  // More segments than the queue sends.
  rte_mbuf* two = packet(64, 2);
  std::vector<rte_mbuf*> segs{two};
  EXPECT_EQ(prepare(segs), 0);
  EXPECT_EQ(rte_errno, EINVAL);
  q_.max_segs = 15;
  EXPECT_EQ(prepare(segs), 1);
  rte_pktmbuf_free(two);
  rte_pktmbuf_free(udp4);
  rte_pktmbuf_free(tcp6);
}

// A frame above what the MTU allows on the wire (MTU + 14, + 4 with a tag in the data) is refused
// (the NIC would drop it: CQE_TX_MTU_DROP), with or without a checksum request, and each refusal
// is counted under its reason (doc/guide.md "Features", TX prepare).
TEST_F(TxBurstTest, PrepareRefusesFramesAboveTheMtuAndCountsEachReason) {
  state_.data.mtu = 1500;
  rte_mbuf* fits = packet(1514);
  rte_mbuf* above = packet(1515);
  rte_mbuf* csum_above = l4_packet(false, 1515);
  rte_mbuf* tagged = packet(1518);
  rte_pktmbuf_mtod(tagged, rte_ether_hdr*)->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
  rte_mbuf* tagged_above = packet(1519);
  rte_pktmbuf_mtod(tagged_above, rte_ether_hdr*)->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
  rte_mbuf* sctp = l4_packet(false);
  sctp->ol_flags = (sctp->ol_flags & ~RTE_MBUF_F_TX_L4_MASK) | RTE_MBUF_F_TX_SCTP_CKSUM;
  std::vector<rte_mbuf*> good{fits, tagged};
  EXPECT_EQ(prepare(good), 2);
  for (rte_mbuf* m : {above, csum_above, tagged_above, sctp}) {
    std::vector<rte_mbuf*> pkts{fits, m};
    EXPECT_EQ(prepare(pkts), 1);
    EXPECT_EQ(rte_errno, m == sctp ? ENOTSUP : EINVAL);
  }
  EXPECT_EQ(q_.stats.prepare_refused[kPrepareFrameAboveMtu], 3u);
  EXPECT_EQ(q_.stats.prepare_refused[kPrepareUnsupported], 1u);
  EXPECT_EQ(q_.stats.prepare_refused[kPrepareBadRequest], 0u);
  state_.data.mtu = 1501;  // read at each call
  std::vector<rte_mbuf*> now{above};
  EXPECT_EQ(prepare(now), 1);
  for (rte_mbuf* m : {fits, above, csum_above, tagged, tagged_above, sctp}) rte_pktmbuf_free(m);
}

// Headers that span segments: prepare refuses them, the burst refuses and counts them (it cannot
// seed them), instead of sending a packet whose checksum the NIC gets wrong.
TEST_F(TxBurstTest, ChecksumFieldOutsideTheFirstSegmentIsRefused) {
  rte_mbuf* head = l4_packet(false, 30);  // 14 + 20 bytes of headers: the UDP header is beyond
  rte_mbuf* tail = packet(40);
  ASSERT_EQ(rte_pktmbuf_chain(head, tail), 0);
  q_.max_segs = 15;
  std::vector<rte_mbuf*> pkts{head};
  EXPECT_EQ(prepare(pkts), 0);
  EXPECT_EQ(rte_errno, EINVAL);
  const eth_tx_burst_t csum =
      select_tx_burst(RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
  EXPECT_EQ(tx(csum, pkts), 0);
  EXPECT_EQ(q_.stats.csum_headers_split, 1u);
  EXPECT_EQ(q_.sq.head_bu, 0u);
  rte_pktmbuf_free(head);
}

// A shared mbuf (a clone, refcnt > 1) is never written: with the seed already in place (prepared
// before cloning) it is sent; without, prepare and the burst refuse it and the data stays as it
// was.
TEST_F(TxBurstTest, SharedMbufDataIsNeverWritten) {
  const eth_tx_burst_t csum =
      select_tx_burst(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
  rte_mbuf* m = l4_packet(false);
  l4_field(m) = 0x1234;
  rte_mbuf* clone = rte_pktmbuf_clone(m, pool_);
  ASSERT_NE(clone, nullptr);  // attaching copies the offload flags and lengths
  ASSERT_FALSE(RTE_MBUF_DIRECT(clone));
  std::vector<rte_mbuf*> pkts{clone};
  EXPECT_EQ(prepare(pkts), 0);
  EXPECT_EQ(rte_errno, EINVAL);
  EXPECT_EQ(tx(csum, pkts), 0);
  EXPECT_EQ(q_.stats.csum_readonly, 1u);
  EXPECT_EQ(l4_field(m), 0x1234);
  std::vector<rte_mbuf*> direct{m};  // refcnt 2 now: the original is shared too
  EXPECT_EQ(prepare(direct), 0);
  EXPECT_EQ(l4_field(m), 0x1234);

  rte_pktmbuf_free(clone);  // m alone again: prepare may write
  ASSERT_EQ(prepare(direct), 1);
  EXPECT_EQ(l4_field(m), seed_of(m));
  clone = rte_pktmbuf_clone(m, pool_);
  ASSERT_NE(clone, nullptr);  // attaching copies the offload flags and lengths
  ASSERT_FALSE(RTE_MBUF_DIRECT(clone));
  std::vector<rte_mbuf*> seeded{clone};
  EXPECT_EQ(prepare(seeded), 1);
  EXPECT_EQ(tx(csum, seeded), 1);
  rte_pktmbuf_free(m);
}

// The OOB follows the kernel's mana_start_xmit: IP-version bit with every checksum request, TCP
// transport offset from l2_len + l3_len (here with an 18-byte tagged L2 header).
TEST_F(TxBurstTest, ChecksumOobCarriesIpVersionAndTransportOffset) {
  const eth_tx_burst_t csum = select_tx_burst(RTE_ETH_TX_OFFLOAD_TCP_CKSUM);
  rte_mbuf* tcp6 = l4_packet(true, 90, 18);
  rte_mbuf* plain = packet();
  plain->ol_flags = RTE_MBUF_F_TX_IPV4;  // no checksum asked: no IP-version bit either
  std::vector<rte_mbuf*> pkts{tcp6, plain};
  ASSERT_EQ(tx(csum, pkts), 2);
  EXPECT_EQ(l4_field(tcp6), seed_of(tcp6));  // the burst seeds a writable mbuf itself
  const hw::TxShortOob o = oob_at(0);
  EXPECT_EQ(hw::TxShortOob::IsIpv6::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::IsIpv4::get(o.dw0), 0u);
  EXPECT_EQ(hw::TxShortOob::TcpCsum::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::TransportOffset::get(o.dw1), 58u);
  EXPECT_EQ(hw::TxShortOob::IsIpv4::get(oob_at(1).dw0), 0u);
}

TEST_F(TxBurstTest, ManyLapsOfTheRing) {
  const unsigned used = in_use();
  for (int lap = 0; lap < 40; lap++) {
    std::vector<rte_mbuf*> pkts;
    for (int i = 0; i < 31; i++) pkts.push_back(packet());
    ASSERT_EQ(tx(plain_, pkts), 31) << lap;
    complete(hw::kCqeTxOkay);
  }
  tx_reclaim(q_);
  EXPECT_EQ(in_use(), used);
  EXPECT_EQ(q_.desc_head, q_.desc_tail);
  EXPECT_EQ(q_.stats.packets, 40u * 31);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}

// TSO (doc/hardware.md §4.11): prepared as the kernel prepares a GSO packet, sent as one WQE of the
// kernel's GSO form.
class TxTsoTest : public TxBurstTest {
 protected:
  void SetUp() override {
    TxBurstTest::SetUp();
    q_.tso = 1;
    q_.max_segs = q_.max_sge;
    data_.mtu = 1500;
    rte_eth_devices[q_.port_id].data = &data_;
  }
  void TearDown() override {
    rte_eth_devices[q_.port_id].data = nullptr;
    TxBurstTest::TearDown();
  }
  // A TCP packet with 20-byte TCP header, `payload` bytes after it in the first segment (plus
  // `more` segments of 100 bytes), TSO flags and lengths set.
  rte_mbuf* tso_packet(bool v6, uint16_t payload, unsigned more = 0, uint16_t mss = 500) {
    const uint16_t l3 = v6 ? 40 : 20;
    rte_mbuf* m = l4_packet(v6, static_cast<uint16_t>(14 + l3 + 20 + payload));
    uint8_t* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, 14);
    if (!v6) ip[offsetof(rte_ipv4_hdr, next_proto_id)] = IPPROTO_TCP;
    ip[l3 + 12] = 5 << 4;  // TCP data offset
    m->ol_flags = (v6 ? RTE_MBUF_F_TX_IPV6 : RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM) |
                  RTE_MBUF_F_TX_TCP_SEG;
    m->l4_len = 20;
    m->tso_segsz = mss;
    for (unsigned i = 0; i < more; i++) EXPECT_EQ(rte_pktmbuf_chain(m, packet(100)), 0);
    return m;
  }
  hw::Sge sge_at(uint32_t bu, uint32_t i) const {
    hw::Sge s;
    std::memcpy(&s, txq_.sq_ring() + ((bu * 32 + 16 + 16 * i) & txq_.sq_ring_mask()), sizeof(s));
    return s;
  }
  rte_eth_dev_data data_{};
  eth_tx_burst_t tso_ = select_tx_burst(RTE_ETH_TX_OFFLOAD_TCP_TSO);
};

TEST_F(TxTsoTest, PrepareWritesTheHeadersAsTheKernelDoes) {
  rte_mbuf* v4 = tso_packet(false, 1000);
  rte_mbuf* v6 = tso_packet(true, 1000);
  std::vector<rte_mbuf*> pkts{v4, v6};
  ASSERT_EQ(prepare(pkts), 2);
  auto* ip4 = rte_pktmbuf_mtod_offset(v4, rte_ipv4_hdr*, 14);
  EXPECT_EQ(ip4->total_length, 0);
  EXPECT_EQ(ip4->hdr_checksum, 0);
  // DPDK's TSO convention: the pseudo-header sum without the length.
  EXPECT_EQ(*rte_pktmbuf_mtod_offset(v4, uint16_t*, 34 + 16),
            rte_ipv4_phdr_cksum(ip4, v4->ol_flags));
  auto* ip6 = rte_pktmbuf_mtod_offset(v6, rte_ipv6_hdr*, 14);
  EXPECT_EQ(ip6->payload_len, 0);
  EXPECT_EQ(*rte_pktmbuf_mtod_offset(v6, uint16_t*, 54 + 16),
            rte_ipv6_phdr_cksum(ip6, v6->ol_flags));
  for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
}

TEST_F(TxTsoTest, OneWqeWithTheMssAndTheHeadersAloneInSge0) {
  rte_mbuf* v4 = tso_packet(false, 1000, 2);  // headers + 1000 bytes, then 2 x 100
  std::vector<rte_mbuf*> pkts{v4};
  ASSERT_EQ(prepare(pkts), 1);
  const uint32_t bu = q_.sq.head_bu;
  ASSERT_EQ(tx(tso_, pkts), 1);
  const hw::WqeHeader h = header_at(bu);
  EXPECT_EQ(h.num_sge(), 4u);  // headers, rest of the first segment, two segments
  EXPECT_EQ(hw::WqeHeader::ClientOobInSgl::get(h.dw1), 1u);
  EXPECT_EQ(hw::WqeHeader::ClientDataUnit::get(h.dw1), 500u);
  EXPECT_EQ(hw::WqeHeader::LastVbytes::get(h.dw0), 54u);
  const hw::TxShortOob o = oob_at(bu);
  EXPECT_EQ(hw::TxShortOob::IsIpv4::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::IpCsum::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::TcpCsum::get(o.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::TransportOffset::get(o.dw1), 34u);
  const uintptr_t data = rte_pktmbuf_mtod(v4, uintptr_t);
  EXPECT_EQ(sge_at(bu, 0).address, data);
  EXPECT_EQ(sge_at(bu, 0).size, 54u);
  EXPECT_EQ(sge_at(bu, 1).address, data + 54);
  EXPECT_EQ(sge_at(bu, 1).size, 1000u);
  EXPECT_EQ(sge_at(bu, 1).mem_key, sge_at(bu, 0).mem_key);
  EXPECT_EQ(sge_at(bu, 2).size, 100u);
  EXPECT_EQ(sge_at(bu, 3).size, 100u);
  EXPECT_EQ(q_.sq.head_bu - bu, hw::wqe_size_bu(hw::kShortOobSize, 4));
}

// A first segment holding exactly the headers needs no split; the burst prepares an unprepared
// packet itself.
TEST_F(TxTsoTest, HeadersFillingTheFirstSegmentTakeItWhole) {
  rte_mbuf* v6 = tso_packet(true, 0, 3);
  std::vector<rte_mbuf*> pkts{v6};
  const uint32_t bu = q_.sq.head_bu;
  ASSERT_EQ(tx(tso_, pkts), 1);
  EXPECT_EQ(header_at(bu).num_sge(), 4u);
  EXPECT_EQ(sge_at(bu, 0).size, 74u);
  EXPECT_EQ(hw::TxShortOob::IsIpv6::get(oob_at(bu).dw0), 1u);
  EXPECT_EQ(rte_pktmbuf_mtod_offset(v6, rte_ipv6_hdr*, 14)->payload_len, 0);
}

// Headers + MSS above the MTU: refused, counted as tso_frame_above_mtu; a TSO packet whose one
// frame (payload below the MSS) fits passes.
TEST_F(TxTsoTest, PrepareCountsTsoFramesAboveTheMtu) {
  rte_mbuf* big_mss = tso_packet(false, 1600, 0, 1461);  // 20 + 20 + 1461 > 1500
  rte_mbuf* one_frame = tso_packet(false, 1460, 0, 4000);
  std::vector<rte_mbuf*> pkts{one_frame, big_mss};
  EXPECT_EQ(prepare(pkts), 1);
  EXPECT_EQ(rte_errno, EINVAL);
  EXPECT_EQ(q_.stats.prepare_refused[kPrepareTsoAboveMtu], 1u);
  EXPECT_EQ(q_.stats.prepare_refused[kPrepareTsoBeyondWqe], 0u);
  big_mss->tso_segsz = 16384;
  std::vector<rte_mbuf*> wqe{big_mss};
  EXPECT_EQ(prepare(wqe), 0);
  EXPECT_EQ(q_.stats.prepare_refused[kPrepareTsoBeyondWqe], 1u);
  rte_pktmbuf_free(big_mss);
  rte_pktmbuf_free(one_frame);
}

// Without tx_prepare the burst still refuses what the WQE's fields cannot hold (the NIC would cut
// an MSS to 14 bits): it stops there, counts it and posts nothing.
TEST_F(TxTsoTest, BurstRefusesAnUnpreparedRequestTheWqeCannotCarry) {
  rte_mbuf* m = tso_packet(false, 1000);
  m->tso_segsz = 16384;
  std::vector<rte_mbuf*> pkts{m};
  const uint32_t bu = q_.sq.head_bu;
  EXPECT_EQ(tx(tso_, pkts), 0);
  EXPECT_EQ(q_.stats.tso_invalid, 1u);
  EXPECT_EQ(q_.sq.head_bu, bu);
  m->tso_segsz = 500;
  EXPECT_EQ(tx(tso_, pkts), 1);
  EXPECT_EQ(hw::WqeHeader::ClientDataUnit::get(header_at(bu).dw1), 500u);
}

TEST_F(TxTsoTest, PrepareRefusesWhatTheWqeCannotCarry) {
  struct Case {
    const char* what;
    void (*spoil)(rte_mbuf*);
  };
  const Case cases[] = {
      {"MSS 0", [](rte_mbuf* m) { m->tso_segsz = 0; }},
      {"MSS beyond 14 bits", [](rte_mbuf* m) { m->tso_segsz = 16384; }},
      {"no TCP header length", [](rte_mbuf* m) { m->l4_len = 0; }},
      {"headers beyond the first segment",
       [](rte_mbuf* m) {
         m->l4_len = 60;
         m->data_len = 70;
       }},
      {"frames above the MTU", [](rte_mbuf* m) { m->tso_segsz = 961; }},
      {"no IP version", [](rte_mbuf* m) { m->ol_flags &= ~RTE_MBUF_F_TX_IPV4; }},
      {"headers only, no payload",
       [](rte_mbuf* m) {
         m->data_len = 54;
         m->pkt_len = 54;
       }},
  };
  data_.mtu = 1000;
  for (const Case& c : cases) {
    rte_mbuf* m = tso_packet(false, 1200);
    c.spoil(m);
    std::vector<rte_mbuf*> pkts{m};
    EXPECT_EQ(prepare(pkts), 0) << c.what;
    EXPECT_EQ(rte_errno, EINVAL) << c.what;
    rte_pktmbuf_free(m);
  }
  // 15 segments whose first holds more than the headers: 16 SGEs.
  rte_mbuf* many = tso_packet(false, 100, 14);
  std::vector<rte_mbuf*> pkts{many};
  EXPECT_EQ(prepare(pkts), 0);
  q_.tso = 0;  // the port has no TSO offload
  rte_mbuf* m = tso_packet(false, 100);
  std::vector<rte_mbuf*> off{m};
  EXPECT_EQ(prepare(off), 0);
  EXPECT_EQ(rte_errno, ENOTSUP);
  rte_pktmbuf_free(many);
  rte_pktmbuf_free(m);
}
