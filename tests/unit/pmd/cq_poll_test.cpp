// SPDX-License-Identifier: BSD-3-Clause
// CQ polling with the owner-bit protocol across many wraps (doc/hardware.md §4.5), and decoding of
// RX CQEs, coalesced ones included (doc/hardware.md §4.7, §4.10).
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "gdma.h"
#include "rx_cqe.h"

namespace {

using namespace mana;

// The producer side of doc/hardware.md §4.5: the j-th CQE of the CQ's life, data first, owner bits
// last.
class FakeCqProducer {
 public:
  explicit FakeCqProducer(uint32_t count)
      : count_(count),
        ring_(static_cast<hw::Cqe*>(std::aligned_alloc(4096, count * sizeof(hw::Cqe)))) {
    std::memset(ring_, 0, count * sizeof(hw::Cqe));
  }
  ~FakeCqProducer() { std::free(ring_); }

  void produce(uint32_t type, uint32_t tag) {
    hw::Cqe& e = ring_[next_ % count_];
    std::memset(&e, 0, sizeof(e));
    e.dw[0] = hw::Cqe::Type::set(0, type);
    e.dw[1] = tag;
    e.dw[15] = hw::Cqe::Owner::set(hw::Cqe::WqNum::set(0, 3), hw::cq_producer_owner(next_, count_));
    next_++;
  }

  CompletionQueue consumer() const {
    return CompletionQueue{ring_, count_ - 1, log2_of_pow2(count_), hw::cq_initial_head(count_), 1};
  }
  hw::Cqe* ring() { return ring_; }

 private:
  uint32_t count_;
  hw::Cqe* ring_;
  uint64_t next_ = 0;
};

TEST(CqPoll, EmptyRingIsEmpty) {
  FakeCqProducer p(64);
  CompletionQueue cq = p.consumer();
  const hw::Cqe* e = nullptr;
  EXPECT_EQ(cq_peek(cq, &e), CqPoll::kEmpty);
}

// Twenty laps of the ring cover more than two full cycles of the 3-bit owner counter.
TEST(CqPoll, InOrderAcrossManyWraps) {
  constexpr uint32_t kCount = 64;
  FakeCqProducer p(kCount);
  CompletionQueue cq = p.consumer();
  uint32_t produced = 0, consumed = 0;
  const uint32_t batches[] = {1, 7, 64, 33, 63, 2};
  for (unsigned round = 0; consumed < 20 * kCount; round++) {
    const uint32_t n = batches[round % RTE_DIM(batches)];
    for (uint32_t i = 0; i < n; i++) p.produce(hw::kCqeRxOkay, produced++);
    const hw::Cqe* e = nullptr;
    while (cq_peek(cq, &e) == CqPoll::kValid) {
      ASSERT_EQ(e->dw[1], consumed) << "round " << round;
      cq.head++;
      consumed++;
    }
    ASSERT_EQ(consumed, produced);
    ASSERT_EQ(cq_peek(cq, &e), CqPoll::kEmpty);
  }
}

TEST(CqPoll, ProducerLappingTheConsumerIsOverflow) {
  constexpr uint32_t kCount = 64;
  FakeCqProducer p(kCount);
  CompletionQueue cq = p.consumer();
  for (uint32_t i = 0; i < kCount + 1; i++) p.produce(hw::kCqeTxOkay, i);
  const hw::Cqe* e = nullptr;
  EXPECT_EQ(cq_peek(cq, &e), CqPoll::kOverflow);
}

hw::Cqe rx_cqe(uint32_t type, std::vector<uint16_t> lengths, uint32_t dw1) {
  hw::Cqe c{};
  c.dw[0] = type;
  c.dw[1] = dw1;
  for (size_t k = 0; k < lengths.size(); k++) {
    c.rx_packet(static_cast<unsigned>(k)).dw0 = lengths[k];
    c.rx_packet(static_cast<unsigned>(k)).packet_hash = 0x1000u + static_cast<uint32_t>(k);
  }
  return c;
}

TEST(RxCqe, PacketCountOfOkayAndCoalesced) {
  EXPECT_EQ(rx_cqe_packets(rx_cqe(hw::kCqeRxOkay, {60}, 0)), 1u);
  EXPECT_EQ(rx_cqe_packets(rx_cqe(hw::kCqeRxCoalesced4, {60, 70, 80}, 0)), 3u);
  EXPECT_EQ(rx_cqe_packets(rx_cqe(hw::kCqeRxCoalesced4, {60, 70, 80, 90}, 0)), 4u);
  EXPECT_EQ(rx_cqe_packets(rx_cqe(hw::kCqeRxCoalesced4, {60, 0, 80, 90}, 0)), 1u);
  // A zero length in first place: the completion consumed no WQE (the kernel's reading).
  EXPECT_EQ(rx_cqe_packets(rx_cqe(hw::kCqeRxOkay, {}, 0)), 0u);
  EXPECT_EQ(rx_cqe_packets(rx_cqe(hw::kCqeRxCoalesced4, {0, 70, 80}, 0)), 0u);
}

uint32_t dw1_of(uint32_t hash_type, std::initializer_list<unsigned> bits) {
  uint32_t dw1 = hw::Cqe::RxHashType::set(0, hash_type);
  for (unsigned b : bits) dw1 |= 1u << b;
  return dw1;
}

TEST(RxCqe, ChecksumFlags) {
  EXPECT_EQ(rx_checksum_flags(0), 0u);  // unknown stays unknown
  EXPECT_EQ(rx_checksum_flags(dw1_of(0, {25, 27})),
            RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD);
  EXPECT_EQ(rx_checksum_flags(dw1_of(0, {26, 30})),
            RTE_MBUF_F_RX_IP_CKSUM_BAD | RTE_MBUF_F_RX_L4_CKSUM_BAD);
  EXPECT_EQ(rx_checksum_flags(dw1_of(0, {14})), RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD);
}

// Real hardware reports one NDIS bit per packet: every single bit must validate the hash.
TEST(RxCqe, HashValidByBitTest) {
  EXPECT_FALSE(rx_hash_valid(0));
  for (unsigned bit = 0; bit < 9; bit++) EXPECT_TRUE(rx_hash_valid(dw1_of(1u << bit, {}))) << bit;
}

TEST(RxCqe, PacketTypeFromHashAndChecksumBits) {
  EXPECT_EQ(rx_packet_type(0).ptype, RTE_PTYPE_L2_ETHER);
  EXPECT_TRUE(rx_packet_type(0).l3_from_frame);
  // One hash bit is exact: no need to look at the frame.
  EXPECT_EQ(rx_packet_type(dw1_of(hw::kHashTcpIpv4, {})).ptype,
            RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN | RTE_PTYPE_L4_TCP);
  EXPECT_FALSE(rx_packet_type(dw1_of(hw::kHashTcpIpv4, {})).l3_from_frame);
  EXPECT_EQ(rx_packet_type(dw1_of(hw::kHashUdpIpv6, {25})).ptype,
            RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN | RTE_PTYPE_L4_UDP);
  EXPECT_EQ(rx_packet_type(dw1_of(hw::kHashIpv6Ex, {})).ptype,
            RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN);
  // The IP-checksum bit does not mean IPv4 (the NIC may set it for IPv6): the frame decides.
  EXPECT_EQ(rx_packet_type(dw1_of(0, {25, 29})).ptype, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L4_UDP);
  EXPECT_TRUE(rx_packet_type(dw1_of(0, {25, 29})).l3_from_frame);
  // Composite masks: L3 from the frame, L4 only from the checksum bits.
  EXPECT_EQ(rx_packet_type(dw1_of(hw::kHashL4, {})).ptype, RTE_PTYPE_L2_ETHER);
  EXPECT_TRUE(rx_packet_type(dw1_of(hw::kHashL4, {})).l3_from_frame);
  EXPECT_EQ(rx_packet_type(dw1_of(hw::kHashL4, {28})).ptype, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L4_TCP);
  EXPECT_EQ(rx_packet_type(dw1_of(hw::kHashL3, {})).ptype, RTE_PTYPE_L2_ETHER);
  // The frame's EtherType after the stripped tag.
  uint8_t frame[14] = {};
  frame[12] = 0x86;
  frame[13] = 0xDD;
  EXPECT_EQ(rx_l3_ptype_of_frame(frame), RTE_PTYPE_L3_IPV6_EXT_UNKNOWN);
  frame[12] = 0x08;
  frame[13] = 0x00;
  EXPECT_EQ(rx_l3_ptype_of_frame(frame), RTE_PTYPE_L3_IPV4_EXT_UNKNOWN);
  frame[13] = 0x06;
  EXPECT_EQ(rx_l3_ptype_of_frame(frame), 0u);
  // Every ptype set is advertised.
  const uint32_t* list = rx_supported_ptypes();
  uint32_t advertised = 0;
  for (; *list != RTE_PTYPE_UNKNOWN; list++) advertised |= *list;
  EXPECT_EQ(advertised & RTE_PTYPE_L2_ETHER_VLAN, RTE_PTYPE_L2_ETHER_VLAN);
  for (uint32_t hash = 0; hash < 512; hash++)
    for (uint32_t csum = 0; csum < 64; csum++) {
      const uint32_t pt = rx_packet_type(hw::Cqe::RxHashType::set(csum << 25, hash)).ptype;
      EXPECT_EQ(pt & ~advertised, 0u);
    }
}

TEST(RxCqe, VlanTagInfo) {
  const uint32_t dw1 = hw::Cqe::RxVlanPresent::set(hw::Cqe::RxVlanId::set(0, 0xABC), 1);
  EXPECT_TRUE(rx_vlan_present(dw1));
  EXPECT_EQ(rx_vlan_tci(dw1), 0xABC);
  EXPECT_FALSE(rx_vlan_present(0));
}

}  // namespace
