// SPDX-License-Identifier: BSD-3-Clause
// The RX burst on a fake queue (doc/hardware.md §4.4, §4.5, §4.7, §7): okay and coalesced
// completions (split across bursts), error completions recycled in place, mbuf exhaustion without
// holes, one doorbell.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_rx_queue.h"
#include "rx_cqe.h"

namespace {

using namespace mana;
using mana_test::FakeCq;

constexpr uint32_t kRing = 64;
constexpr uint32_t kRqId = 0x1234;
constexpr uint64_t kOffloads =
    RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH | RTE_ETH_RX_OFFLOAD_VLAN_STRIP;

class RxBurstTest : public mana_test::FakePort {
 protected:
  void SetUp() override {
    FakePort::SetUp();
    rxq_.start(state_);
    burst_ = select_rx_burst(kOffloads);
  }
  void TearDown() override {
    rxq_.stop();
    FakePort::TearDown();
  }

  // The NIC: the buffer address of the RQ WQE with index `wqe`.
  uint64_t wqe_buffer(uint32_t wqe) const {
    const hw::Sge sge = rxq_.wqe_sge(wqe);
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
  // The frame the NIC writes into the buffer of RQ WQE `wqe`: MACs 0x11.., 0x22.., `ethertype`.
  void write_frame(uint32_t wqe, uint16_t ethertype) {
    auto* f = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(wqe_buffer(wqe)));
    std::memset(f, 0x11, 6);
    std::memset(f + 6, 0x22, 6);
    f[12] = static_cast<uint8_t>(ethertype >> 8);
    f[13] = static_cast<uint8_t>(ethertype);
    std::memset(f + 14, 0x33, 50);
  }
  uint64_t cq_doorbell_value() const { return doorbell(hw::kCqDoorbellOffset); }

  mana_test::FakeRxQueue rxq_{kRing, kRqId, 7};
  RxQueue& q_ = rxq_.q;
  FakeCq& cq_ = rxq_.cq;
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

// With a per-lcore mempool cache the refill takes the mbufs straight from it: over many bursts
// every posted WQE holds the buffer of the mbuf in its slot, no mbuf is posted twice, and the pool
// accounts for every mbuf.
TEST_F(RxBurstTest, RefillFromTheLcoreCachePostsEachMbufOnce) {
  rte_mempool* cached =
      rte_pktmbuf_pool_create("rx_cached", 1023, 128, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  ASSERT_NE(cached, nullptr);
  q_.mp = cached;
  rte_mbuf* pkts[16];
  for (unsigned round = 0; round < 40; round++) {
    for (unsigned i = 0; i < 16; i++) complete(hw::kCqeRxOkay, {60});
    ASSERT_EQ(rx(pkts, 16), 16) << "round " << round;
    std::vector<rte_mbuf*> posted;
    for (uint32_t w = q_.rq.tail_bu; w != q_.rq.head_bu; w++) {
      rte_mbuf* m = rxq_.slots()[w & (kRing - 1)];
      EXPECT_EQ(wqe_buffer(w), reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM);
      posted.push_back(m);
    }
    std::sort(posted.begin(), posted.end());
    EXPECT_EQ(std::adjacent_find(posted.begin(), posted.end()), posted.end()) << "round " << round;
    rte_pktmbuf_free_bulk(pkts, 16);
  }
  // The ring holds what the cached pool gave it (the first rounds replaced the port pool's).
  EXPECT_EQ(rte_mempool_in_use_count(cached), kRing);
  rxq_.stop();
  EXPECT_EQ(rte_mempool_in_use_count(cached), 0u);
  rxq_.start(state_);  // for TearDown
  rte_mempool_free(cached);
}

// A stopped queue (gate closed) or a detached process: the burst reads no CQE and rings nothing.
TEST_F(RxBurstTest, ClosedGateTouchesNothing) {
  complete(hw::kCqeRxOkay, {60});
  const uint32_t head = q_.cq.head;
  const uint64_t rq_doorbell = doorbell(hw::kRqDoorbellOffset);
  rte_mbuf* pkts[32];
  ASSERT_TRUE(gate_close(q_.gate, 10));
  EXPECT_EQ(rx(pkts, 32), 0);
  EXPECT_EQ(q_.cq.head, head);
  EXPECT_EQ(doorbell(hw::kRqDoorbellOffset), rq_doorbell);
  gate_open(q_.gate);
  pp_.bursts_open = 0;
  EXPECT_EQ(rx(pkts, 32), 0);
  EXPECT_EQ(q_.cq.head, head);
  pp_.bursts_open = 1;
  ASSERT_EQ(rx(pkts, 32), 1);  // the completion waited
  EXPECT_EQ(q_.gate.busy, 0u);
  rte_pktmbuf_free(pkts[0]);
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

// doc/hardware.md §4.5: once the head moved past a CQE the NIC may write that slot again; with
// zero-length CQEs (which consume no WQE) it does so within one lap. The rest of a split CQE must
// come from what the NIC reported then, not from the rewritten slot.
TEST_F(RxBurstTest, SplitCompletionSurvivesTheNicRewritingItsSlot) {
  complete(hw::kCqeRxCoalesced4, {100, 101, 102, 103});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 2), 2);
  rte_pktmbuf_free_bulk(pkts, 2);
  for (uint32_t i = 0; i < kRing - 1; i++) complete(hw::kCqeRxOkay, {});
  complete(hw::kCqeRxOkay, {200});  // lands in the split CQE's slot
  ASSERT_EQ(rx(pkts, 8), 3);
  EXPECT_EQ(pkts[0]->pkt_len, 102u);
  EXPECT_EQ(pkts[1]->pkt_len, 103u);
  EXPECT_EQ(pkts[2]->pkt_len, 200u);
  rte_pktmbuf_free_bulk(pkts, 3);
  EXPECT_EQ(q_.rq.tail_bu, 5u);
}

// A packet reported longer than the posted buffer would let the application read past the mbuf:
// dropped and counted as an error, its buffer reposted, the packets around it delivered.
TEST_F(RxBurstTest, PacketLongerThanTheBufferIsAnError) {
  const uint64_t big = wqe_buffer(1);
  const auto too_long = static_cast<uint16_t>(q_.buf_len + 1);
  complete(hw::kCqeRxCoalesced4, {64, too_long, static_cast<uint16_t>(q_.buf_len)});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 8), 2);
  EXPECT_EQ(pkts[0]->pkt_len, 64u);
  EXPECT_EQ(pkts[1]->pkt_len, q_.buf_len);
  rte_pktmbuf_free_bulk(pkts, 2);
  EXPECT_EQ(q_.stats.errors, 1u);
  EXPECT_EQ(q_.stats.oversize_packets, 1u);
  EXPECT_EQ(q_.stats.packets, 2u);
  EXPECT_EQ(wqe_buffer(kRing + 1), big);  // reposted
  EXPECT_EQ(q_.rq.head_bu - q_.rq.tail_bu, kRing);
}

TEST_F(RxBurstTest, ErrorCompletionRecyclesTheBufferInPlace) {
  const uint64_t bad = wqe_buffer(1);
  complete(hw::kCqeRxOkay, {64});
  complete(hw::kCqeRxTruncated, {});
  complete(hw::kCqeRxOkay, {65});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 8), 2);
  EXPECT_EQ(pkts[0]->pkt_len, 64u);
  EXPECT_EQ(pkts[1]->pkt_len, 65u);
  rte_pktmbuf_free_bulk(pkts, 2);
  EXPECT_EQ(q_.stats.errors, 1u);
  EXPECT_EQ(q_.stats.cqe_errors[2], 1u);  // truncated
  EXPECT_EQ(wqe_buffer(kRing + 1), bad);  // same buffer, reposted
  EXPECT_EQ(q_.rq.head_bu, kRing + 3);
}

// An object fence, CQE_INVALID and an unknown type consume no RQ WQE (the kernel's
// mana_process_rx_cqe, doc/hardware.md §4.7): the packets around them get the buffers the NIC
// wrote them into, and the ring stays in step. Counted by type, not as dropped packets.
TEST_F(RxBurstTest, FenceInvalidAndUnknownCompletionsConsumeNoWqe) {
  const uint64_t b0 = wqe_buffer(0), b1 = wqe_buffer(1), b2 = wqe_buffer(2);
  complete(hw::kCqeRxOkay, {64});
  complete(hw::kCqeRxObjectFence, {});
  complete(hw::kCqeRxOkay, {65});
  complete(hw::kCqeInvalid, {});
  complete(63, {});  // a type the format does not define
  complete(hw::kCqeRxOkay, {66});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 8), 3);
  const uint64_t delivered[3] = {b0, b1, b2};
  for (unsigned i = 0; i < 3; i++) {
    EXPECT_EQ(pkts[i]->pkt_len, 64u + i);
    EXPECT_EQ(rte_pktmbuf_mtod(pkts[i], uintptr_t), delivered[i]) << "packet " << i;
  }
  rte_pktmbuf_free_bulk(pkts, 3);
  EXPECT_EQ(q_.rq.tail_bu, 3u);
  EXPECT_EQ(q_.rq.head_bu, kRing + 3);
  EXPECT_EQ(q_.stats.errors, 0u);
  EXPECT_EQ(q_.stats.cqe_errors[0], 1u);  // invalid
  EXPECT_EQ(q_.stats.cqe_errors[1], 1u);  // object fence
  EXPECT_EQ(q_.stats.cqe_errors[3], 1u);  // unknown
}

// A CQE naming another RQ, or an SQ, is not ours (the kernel's mana_poll_rx_cq checks is_sq and
// wq_num, doc/hardware.md §4.7): skipped and counted, consuming no WQE; the CQEs after it are
// taken.
TEST_F(RxBurstTest, CompletionForAnotherQueueIsSkippedAndCounted) {
  const uint64_t b0 = wqe_buffer(0), b1 = wqe_buffer(1);
  complete(hw::kCqeRxOkay, {64});
  cq_.produce([](hw::Cqe& e) {  // another RQ
    e.dw[0] = hw::kCqeRxOkay;
    e.rx_packet(0).dw0 = 70;
    e.dw[15] = hw::Cqe::WqNum::set(0, kRqId + 1);
  });
  cq_.produce([](hw::Cqe& e) {  // our id, but an SQ's
    e.dw[0] = hw::kCqeRxOkay;
    e.rx_packet(0).dw0 = 71;
    e.dw[15] = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kRqId), 1);
  });
  complete(hw::kCqeRxOkay, {65});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 8), 2);
  EXPECT_EQ(pkts[0]->pkt_len, 64u);
  EXPECT_EQ(pkts[1]->pkt_len, 65u);
  EXPECT_EQ(rte_pktmbuf_mtod(pkts[0], uintptr_t), b0);
  EXPECT_EQ(rte_pktmbuf_mtod(pkts[1], uintptr_t), b1);
  rte_pktmbuf_free_bulk(pkts, 2);
  EXPECT_EQ(q_.stats.misdirected_cqes, 2u);
  EXPECT_EQ(q_.stats.errors, 0u);
  EXPECT_EQ(q_.cq.head, kRing + 4);  // all four taken off the CQ
  EXPECT_EQ(q_.rq.tail_bu, 2u);
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
  for (rte_mbuf* m : rxq_.slots()) EXPECT_NE(m, nullptr);
  EXPECT_EQ(q_.rq.head_bu - q_.rq.tail_bu, kRing);
  rte_pktmbuf_free_bulk(hoard.data(), static_cast<unsigned>(hoard.size()));
  complete(hw::kCqeRxOkay, {66});
  ASSERT_EQ(rx(pkts, 8), 1);
  EXPECT_EQ(pkts[0]->pkt_len, 66u);
  rte_pktmbuf_free(pkts[0]);
}

// doc/hardware.md §4.7: a zero length in a completion's first packet entry means it consumed no RQ
// WQE (the kernel's mana_process_rx_cqe); the next completions still name the next WQEs.
TEST_F(RxBurstTest, ZeroLengthFirstEntryConsumesNoWqe) {
  const uint64_t first = wqe_buffer(0), second = wqe_buffer(1), third = wqe_buffer(2);
  complete(hw::kCqeRxOkay, {0});
  complete(hw::kCqeRxOkay, {64});
  complete(hw::kCqeRxCoalesced4, {0, 70, 71});  // nothing after a zero length counts either
  complete(hw::kCqeRxCoalesced4, {65, 66});
  rte_mbuf* pkts[8];
  ASSERT_EQ(rx(pkts, 8), 3);
  EXPECT_EQ(rte_pktmbuf_mtod(pkts[0], uintptr_t), first);
  EXPECT_EQ(pkts[0]->pkt_len, 64u);
  EXPECT_EQ(rte_pktmbuf_mtod(pkts[1], uintptr_t), second);
  EXPECT_EQ(pkts[1]->pkt_len, 65u);
  EXPECT_EQ(rte_pktmbuf_mtod(pkts[2], uintptr_t), third);
  EXPECT_EQ(pkts[2]->pkt_len, 66u);
  rte_pktmbuf_free_bulk(pkts, 3);
  EXPECT_EQ(q_.stats.zero_length_cqes, 2u);
  EXPECT_EQ(q_.stats.errors, 0u);
  EXPECT_EQ(q_.rq.tail_bu, 3u);
  EXPECT_EQ(q_.rq.head_bu, kRing + 3);
  // A burst of only zero-length completions delivers nothing and reposts nothing.
  complete(hw::kCqeRxOkay, {});
  EXPECT_EQ(rx(pkts, 8), 0);
  EXPECT_EQ(q_.stats.zero_length_cqes, 3u);
  EXPECT_EQ(q_.rq.head_bu, kRing + 3);
}

// doc/hardware.md §4.5/§4.8: an unarmed CQ doorbell with the consumer index at least every 8 wraps
// of the CQ; the driver rings one once 4 wraps' worth of CQEs were consumed, not more often.
TEST_F(RxBurstTest, UnarmedCqDoorbellEveryFourWraps) {
  rte_mbuf* pkts[32];
  unsigned doorbells = 0;
  uint64_t last = cq_doorbell_value();
  for (uint32_t consumed = 32; consumed <= 20 * kRing; consumed += 32) {
    for (int k = 0; k < 32; k++) complete(hw::kCqeRxOkay, {64});
    ASSERT_EQ(rx(pkts, 32), 32);
    rte_pktmbuf_free_bulk(pkts, 32);
    const uint64_t now = cq_doorbell_value();
    if (now != last) {
      doorbells++;
      EXPECT_EQ(consumed % (4 * kRing), 0u) << consumed;
      EXPECT_EQ(now, hw::cq_doorbell(7, (kRing + consumed) & (kRing * 8 - 1), false));
      last = now;
    }
  }
  EXPECT_EQ(doorbells, 5u);  // 20 wraps
}

// The NIC's view of a received packet, to derive what a CQE reports under each behaviour.
struct WirePacket {
  uint16_t ethertype;  // 0x0800, 0x86DD or another
  int l4;              // 6 TCP, 17 UDP, 0 other
};
enum class HashMode { kOneBit, kMask, kNone };

uint32_t nic_dw1(const WirePacket& p, HashMode mode, bool ipv6_ip_csum, bool l4_csum_bits) {
  const bool v4 = p.ethertype == 0x0800, v6 = p.ethertype == 0x86DD;
  uint32_t hash = 0;
  if ((v4 || v6) && mode == HashMode::kOneBit) {
    if (p.l4 == 6)
      hash = v4 ? hw::kHashTcpIpv4 : hw::kHashTcpIpv6;
    else if (p.l4 == 17)
      hash = v4 ? hw::kHashUdpIpv4 : hw::kHashUdpIpv6;
    else
      hash = v4 ? hw::kHashIpv4 : hw::kHashIpv6;
  } else if ((v4 || v6) && mode == HashMode::kMask) {
    hash = p.l4 ? hw::kHashL4 : hw::kHashL3;
  }
  uint32_t dw1 = hw::Cqe::RxHashType::set(0, hash);
  if (v4 || (v6 && ipv6_ip_csum)) dw1 = hw::Cqe::RxIpCsumOk::set(dw1, 1);
  if (l4_csum_bits && p.l4 == 6) dw1 = hw::Cqe::RxTcpCsumOk::set(dw1, 1);
  if (l4_csum_bits && p.l4 == 17) dw1 = hw::Cqe::RxUdpCsumFail::set(dw1, 1);
  return dw1;
}

// Every combination of hash reporting (one bit, composite mask, none), IPv6 IP-checksum bit and
// L4 checksum bits gives the true L3 type, and the true L4 type wherever the CQE names it.
TEST_F(RxBurstTest, PacketTypeIsRightUnderEveryHashAndChecksumBehaviour) {
  const WirePacket packets[] = {{0x0800, 6},  {0x0800, 17}, {0x0800, 0}, {0x86DD, 6},
                                {0x86DD, 17}, {0x86DD, 0},  {0x0806, 0}};
  uint32_t wqe = 0;
  rte_mbuf* m;
  for (const WirePacket& p : packets)
    for (HashMode mode : {HashMode::kOneBit, HashMode::kMask, HashMode::kNone})
      for (bool ipv6_ip_csum : {false, true})
        for (bool l4_bits : {false, true}) {
          write_frame(wqe++, p.ethertype);
          const uint32_t dw1 = nic_dw1(p, mode, ipv6_ip_csum, l4_bits);
          complete(hw::kCqeRxOkay, {64}, dw1);
          ASSERT_EQ(rx(&m, 1), 1);
          uint32_t l3 = 0, l4 = 0;
          if (p.ethertype == 0x0800) l3 = RTE_PTYPE_L3_IPV4_EXT_UNKNOWN;
          if (p.ethertype == 0x86DD) l3 = RTE_PTYPE_L3_IPV6_EXT_UNKNOWN;
          // The L4 type is known from one hash bit or a checksum bit, never guessed.
          const bool l4_known = l4_bits || (mode == HashMode::kOneBit && l3 != 0);
          if (l4_known && p.l4 == 6) l4 = RTE_PTYPE_L4_TCP;
          if (l4_known && p.l4 == 17) l4 = RTE_PTYPE_L4_UDP;
          const std::string what =
              "ethertype " + std::to_string(p.ethertype) + " l4 " + std::to_string(p.l4) +
              " mode " + std::to_string(static_cast<int>(mode)) + " v6csum " +
              std::to_string(ipv6_ip_csum) + " l4bits " + std::to_string(l4_bits);
          EXPECT_EQ(m->packet_type, RTE_PTYPE_L2_ETHER | l3 | l4) << what;
          EXPECT_EQ(static_cast<bool>(m->ol_flags & RTE_MBUF_F_RX_RSS_HASH),
                    hw::Cqe::RxHashType::get(dw1) != 0)
              << what;
          rte_pktmbuf_free(m);
        }
}

// Runs of CQEs with the same flags that cannot tell the IP version (each packet's EtherType read
// from its own frame), broken by CQEs that can, in both orders within a burst; every packet gets
// its own L3 type.
TEST_F(RxBurstTest, PacketTypeOfEachPacketWhenTheFlagsChangeInABurst) {
  const uint32_t no_hash = hw::Cqe::RxUdpCsumOk::set(0, 1);
  const uint32_t v4_bit = hw::Cqe::RxHashType::set(no_hash, hw::kHashUdpIpv4);
  const uint32_t v6_bit = hw::Cqe::RxHashType::set(no_hash, hw::kHashUdpIpv6);
  struct Packet {
    uint16_t ethertype;
    uint32_t dw1;
  };
  const Packet packets[] = {{0x0800, no_hash}, {0x86DD, no_hash}, {0x0806, no_hash},
                            {0x0800, no_hash}, {0x0800, v4_bit},  {0x86DD, v6_bit},
                            {0x86DD, no_hash}, {0x0800, no_hash}, {0x0800, v4_bit},
                            {0x0800, v4_bit},  {0x0806, no_hash}, {0x86DD, no_hash}};
  constexpr uint16_t kCount = sizeof(packets) / sizeof(packets[0]);
  for (uint32_t i = 0; i < kCount; i++) {
    write_frame(i, packets[i].ethertype);
    complete(hw::kCqeRxOkay, {64}, packets[i].dw1);
  }
  // Two bursts, so that the second starts after flags that tell the IP version.
  rte_mbuf* m[kCount];
  ASSERT_EQ(rx(m, 5), 5);
  ASSERT_EQ(rx(m + 5, kCount - 5), kCount - 5);
  for (uint32_t i = 0; i < kCount; i++) {
    uint32_t l3 = 0;
    if (packets[i].ethertype == 0x0800) l3 = RTE_PTYPE_L3_IPV4_EXT_UNKNOWN;
    if (packets[i].ethertype == 0x86DD) l3 = RTE_PTYPE_L3_IPV6_EXT_UNKNOWN;
    EXPECT_EQ(m[i]->packet_type, RTE_PTYPE_L2_ETHER | l3 | RTE_PTYPE_L4_UDP) << "packet " << i;
  }
  rte_pktmbuf_free_bulk(m, kCount);
}

// Without VLAN_STRIP the application gets the tag back in the data (the NIC always strips it):
// TPID 0x8100 and the VID before the original EtherType, no STRIPPED flag.
TEST_F(RxBurstTest, VlanTagGoesBackIntoTheDataWithoutStripOffload) {
  burst_ = select_rx_burst(kOffloads & ~RTE_ETH_RX_OFFLOAD_VLAN_STRIP);
  write_frame(0, 0x0800);
  const uint32_t dw1 = hw::Cqe::RxVlanPresent::set(hw::Cqe::RxVlanId::set(0, 0x123), 1);
  complete(hw::kCqeRxOkay, {60}, dw1);
  rte_mbuf* m;
  ASSERT_EQ(rx(&m, 1), 1);
  EXPECT_EQ(m->pkt_len, 64u);
  EXPECT_EQ(m->data_len, 64u);
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  for (int i = 0; i < 6; i++) EXPECT_EQ(f[i], 0x11);
  for (int i = 6; i < 12; i++) EXPECT_EQ(f[i], 0x22);
  const uint8_t tag[6] = {0x81, 0x00, 0x01, 0x23, 0x08, 0x00};
  EXPECT_EQ(std::memcmp(f + 12, tag, 6), 0);
  EXPECT_EQ(f[18], 0x33);
  EXPECT_FALSE(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED);
  EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_VLAN);
  EXPECT_EQ(m->vlan_tci, 0x123);
  EXPECT_EQ(m->packet_type, RTE_PTYPE_L2_ETHER_VLAN | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN);
  EXPECT_EQ(q_.stats.bytes, 64u);
  rte_pktmbuf_free(m);
  // An untagged packet is untouched.
  write_frame(1, 0x0800);
  complete(hw::kCqeRxOkay, {60}, 0);
  ASSERT_EQ(rx(&m, 1), 1);
  EXPECT_EQ(m->pkt_len, 60u);
  EXPECT_EQ(rte_pktmbuf_mtod(m, const uint8_t*)[12], 0x08);
  EXPECT_EQ(m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED), 0u);
  rte_pktmbuf_free(m);
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

// rx_free_thresh: consumed WQEs are reposted together once that many are free, with one doorbell;
// a refill the pool cannot serve drops this burst's packets (counted) to keep the ring full.
TEST_F(RxBurstTest, RefillWaitsForTheFreeThreshold) {
  q_.free_thresh = 8;
  const uint64_t rq_doorbell = doorbell(hw::kRqDoorbellOffset);
  rte_mbuf* pkts[8];
  for (int k = 0; k < 3; k++) complete(hw::kCqeRxOkay, {64});
  ASSERT_EQ(rx(pkts, 8), 3);
  EXPECT_EQ(q_.rq.head_bu, kRing);  // nothing reposted yet
  EXPECT_EQ(doorbell(hw::kRqDoorbellOffset), rq_doorbell);
  rte_pktmbuf_free_bulk(pkts, 3);
  for (int k = 0; k < 5; k++) complete(hw::kCqeRxOkay, {65});
  ASSERT_EQ(rx(pkts, 8), 5);
  EXPECT_EQ(q_.rq.head_bu, kRing + 8);  // all eight, one doorbell
  EXPECT_EQ(doorbell(hw::kRqDoorbellOffset), hw::rq_doorbell(kRqId, (kRing + 8) * 32));
  for (int k = 0; k < 5; k++)
    for (uint32_t w = kRing; w < kRing + 8; w++)
      EXPECT_NE(wqe_buffer(w), rte_pktmbuf_mtod(pkts[k], uintptr_t))
          << "a delivered buffer reposted";
  rte_pktmbuf_free_bulk(pkts, 5);

  for (int k = 0; k < 3; k++) complete(hw::kCqeRxOkay, {66});
  ASSERT_EQ(rx(pkts, 8), 3);  // below the threshold: no mbuf needed
  std::vector<rte_mbuf*> hoard;
  while (rte_mbuf* m = rte_pktmbuf_alloc(pool_)) hoard.push_back(m);
  for (int k = 0; k < 5; k++) complete(hw::kCqeRxOkay, {67});
  EXPECT_EQ(rx(pkts + 3, 5), 0);  // the refill of eight found no mbuf: these five are dropped
  EXPECT_EQ(q_.stats.nombuf, 5u);
  EXPECT_EQ(q_.rq.head_bu - q_.rq.tail_bu, kRing - 3);  // only the three delivered are missing
  rte_pktmbuf_free_bulk(hoard.data(), static_cast<unsigned>(hoard.size()));
  rte_pktmbuf_free_bulk(pkts, 3);
}

// rx_free_thresh: 0 is the default (32), at most a quarter of the ring and one refill (64).
TEST(RxFreeThresh, DefaultAndLimits) {
  EXPECT_EQ(rx_free_thresh_for(0, 256), 32u);
  EXPECT_EQ(rx_free_thresh_for(5, 256), 5u);
  EXPECT_EQ(rx_free_thresh_for(0, 64), 16u);
  EXPECT_EQ(rx_free_thresh_for(200, 2048), 64u);
  EXPECT_EQ(rx_free_thresh_for(1, 64), 1u);
}

// The mbuf comes raw from the pool and is rearmed by one store: every field a received mbuf must
// have is set, whatever the buffer held before.
TEST_F(RxBurstTest, ReceivedMbufHasEveryField) {
  rte_mbuf* posted = rxq_.slots()[0];
  posted->data_off = 7;
  posted->port = 99;
  posted->nb_segs = 3;
  posted->ol_flags = ~0ull & ~RTE_MBUF_F_EXTERNAL & ~RTE_MBUF_F_INDIRECT;
  posted->packet_type = ~0u;
  posted->vlan_tci = 0xFFFF;
  posted->pkt_len = 1;
  posted->data_len = 1;
  complete(hw::kCqeRxOkay, {60}, hw::Cqe::RxHashType::set(1u << 25 | 1u << 29, hw::kHashUdpIpv4));
  rte_mbuf* m;
  ASSERT_EQ(rx(&m, 1), 1);
  ASSERT_EQ(m, posted);
  EXPECT_EQ(m->data_off, RTE_PKTMBUF_HEADROOM);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  EXPECT_EQ(m->nb_segs, 1);
  EXPECT_EQ(m->port, mana_test::kFakePortId);
  EXPECT_EQ(m->next, nullptr);
  EXPECT_EQ(m->ol_flags,
            RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD | RTE_MBUF_F_RX_RSS_HASH);
  EXPECT_EQ(m->packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN | RTE_PTYPE_L4_UDP);
  EXPECT_EQ(m->pkt_len, 60u);
  EXPECT_EQ(m->data_len, 60u);
  EXPECT_EQ(m->vlan_tci, 0u);
  EXPECT_EQ(m->hash.rss, 0xABC0u + 60);
  EXPECT_EQ(rte_pktmbuf_mtod(m, uintptr_t),
            reinterpret_cast<uintptr_t>(m->buf_addr) + RTE_PKTMBUF_HEADROOM);
  rte_pktmbuf_free(m);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
