// SPDX-License-Identifier: BSD-3-Clause
// The TX fast path's own rules (doc/guide.md "TX thresholds", doc/performance.md "Cost per
// packet"): the CQE cadence of tx_rs_thresh, reclaim below tx_free_thresh, the bulk free with and
// without MBUF_FAST_FREE, the seed tx_prepare marks so that the burst does not check it again, the
// burst's own seed on packets tx_prepare did not see, and the pseudo-header seed's few adds against
// DPDK's own functions.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include <rte_ip.h>
#include <rte_mbuf_dyn.h>

#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_tx_queue.h"
#include "tx_checksum.h"

namespace {

using namespace mana;

constexpr uint32_t kRing = mana_test::FakeTxPort::kRing;
constexpr uint32_t kSqId = mana_test::FakeTxPort::kSqId;

class TxFastPathTest : public mana_test::FakeTxPort {
 protected:
  rte_mbuf* packet(uint16_t len = 64) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    EXPECT_NE(m, nullptr);
    EXPECT_NE(rte_pktmbuf_append(m, len), nullptr);
    return m;
  }
  uint16_t send(unsigned n, eth_tx_burst_t burst = select_tx_burst(0)) {
    std::vector<rte_mbuf*> pkts;
    for (unsigned i = 0; i < n; i++) pkts.push_back(packet());
    return burst(&q_, pkts.data(), static_cast<uint16_t>(n));
  }
  bool suppressed_at(uint32_t bu) const {
    hw::TxShortOob o;
    std::memcpy(&o, txq_.sq_ring() + ((bu * 32 + 8) & txq_.sq_ring_mask()), sizeof(o));
    return hw::TxShortOob::SuppressCqe::get(o.dw0) != 0;
  }
  // tx_prepare's mark, as the queue's setup registers it.
  void use_seeded_flag() {
    rte_mbuf_dynflag desc{};
    std::strcpy(desc.name, "mana_tx_seeded");
    const int bit = rte_mbuf_dynflag_register(&desc);
    ASSERT_GE(bit, 0);
    q_.seeded_flag = uint64_t{1} << bit;
  }
  // An 80-byte IPv4/UDP frame from 10.0.0.`host` asking for both checksums, the field zero.
  rte_mbuf* udp_ipv4_packet(uint8_t host) {
    rte_mbuf* m = packet(80);
    uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
    std::memset(d, 0, 80);
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(d + 14);
    ip->version_ihl = 0x45;
    ip->total_length = rte_cpu_to_be_16(66);
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(0x0A000000 | host);
    ip->dst_addr = rte_cpu_to_be_32(0x0A000002);
    m->l2_len = 14;
    m->l3_len = 20;
    m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
    return m;
  }
  static uint16_t* udp_checksum_field(rte_mbuf* m) {
    return rte_pktmbuf_mtod_offset(m, uint16_t*, 14 + 20 + 6);
  }
  // DPDK's own pseudo-header sum of the frame (with the flags of a checksum request).
  static uint16_t seed_of(rte_mbuf* m) {
    return rte_ipv4_phdr_cksum(rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, 14),
                               RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_UDP_CKSUM);
  }
  // The NIC: one okay CQE naming the WQE at `bu`.
  void complete(uint32_t bu) {
    cq_.produce([&](hw::Cqe& e) {
      e.dw[0] = hw::Cqe::ClientType::set(hw::kCqeTxOkay, hw::kClientTypeCompletion);
      e.dw[hw::Cqe::kTxWqeOffsetDword] = hw::Cqe::TxWqeOffset::set(0, bu);
      e.dw[15] = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kSqId), 1);
    });
  }
};

// tx_rs_thresh 4: bursts of one packet ask for a CQE with every fourth, a burst that crosses the
// threshold asks with its last packet; the descriptors record which ones.
TEST_F(TxFastPathTest, CqeRequestedEveryRsThreshPackets) {
  q_.rs_thresh = 4;
  for (int i = 0; i < 8; i++) ASSERT_EQ(send(1), 1);
  for (uint32_t bu = 0; bu < 8; bu++) {
    EXPECT_EQ(suppressed_at(bu), bu != 3 && bu != 7) << bu;
    EXPECT_EQ(q_.descs[bu].suppressed != 0, bu != 3 && bu != 7) << bu;
  }
  ASSERT_EQ(send(2), 2);  // 2 since the last request: none
  ASSERT_EQ(send(5), 5);  // 7: the burst's last asks
  for (uint32_t bu = 8; bu < 15; bu++) EXPECT_EQ(suppressed_at(bu), bu != 14) << bu;
  EXPECT_EQ(q_.since_cqe, 0u);
  // Each CQE completes through the WQE it names, the suppressed ones before it included.
  complete(3);
  complete(7);
  complete(14);
  EXPECT_EQ(tx_reclaim(q_), 15u);
  EXPECT_EQ(q_.sq.tail_bu, q_.sq.head_bu);
}

// tx_free_thresh 8: a burst reclaims only when fewer than 8 descriptors are free, an empty burst
// always, and a burst that finds the ring full reclaims before giving up.
TEST_F(TxFastPathTest, ReclaimOnlyBelowFreeThresh) {
  q_.reclaim_below = 8;
  ASSERT_EQ(send(16), 16);
  complete(15);
  ASSERT_EQ(send(16), 16);
  EXPECT_EQ(q_.desc_tail, 0u) << "reclaimed with 48 descriptors free";
  const eth_tx_burst_t burst = select_tx_burst(0);
  EXPECT_EQ(burst(&q_, nullptr, 0), 0);
  EXPECT_EQ(q_.desc_tail, 16u) << "an empty burst reclaims";
  complete(31);
  ASSERT_EQ(send(41), 41);  // 48 free before: no reclaim
  EXPECT_EQ(q_.desc_tail, 16u);
  complete(72);
  const unsigned used = in_use();
  ASSERT_EQ(send(1), 1);  // 7 free: reclaims first
  EXPECT_EQ(q_.desc_tail, 73u);
  EXPECT_EQ(in_use(), used + 1 - 57);
  // Full ring, 2-BU WQEs (long OOB): the SQ fills while descriptors stay free above the threshold.
  complete(73);
  tx_reclaim(q_);
  q_.oob = make_tx_oob_template(mana_test::FakeTxPort::kCqId, kSqId, 300);
  q_.sq.capacity_bu = 32;
  const eth_tx_burst_t long_oob = select_tx_burst(0, true);
  ASSERT_EQ(send(16, long_oob), 16);  // 32 basic units: the SQ is full
  complete(q_.sq.head_bu - 2);
  EXPECT_EQ(send(4, long_oob), 4) << "the full SQ was not reclaimed";
  EXPECT_EQ(q_.stats.ring_full, 0u);
}

// Without MBUF_FAST_FREE a completed mbuf that is shared goes through the generic free (its
// reference dropped, not put back in the pool); with it, completed mbufs go back in bulk.
TEST_F(TxFastPathTest, FastFreeOnlyWhenConfigured) {
  rte_mbuf* shared = packet();
  rte_mbuf_refcnt_update(shared, 1);
  std::vector<rte_mbuf*> pkts{packet(), shared, packet()};
  ASSERT_EQ(select_tx_burst(0)(&q_, pkts.data(), 3), 3);
  const unsigned used = in_use();
  complete(2);
  EXPECT_EQ(tx_reclaim(q_), 3u);
  EXPECT_EQ(rte_mbuf_refcnt_read(shared), 1) << "the shared mbuf went back to the pool";
  EXPECT_EQ(in_use(), used - 2);

  q_.fast_free = 1;
  ASSERT_EQ(send(5), 5);
  const unsigned before = in_use();
  complete(7);
  EXPECT_EQ(tx_reclaim(q_), 5u);
  EXPECT_EQ(in_use(), before - 5);
  // The fast path trusts the application: a shared mbuf would go back as it is.
  std::vector<rte_mbuf*> one{shared};
  rte_mbuf_refcnt_update(shared, 1);
  ASSERT_EQ(select_tx_burst(0)(&q_, one.data(), 1), 1);
  const unsigned with_shared = in_use();
  complete(8);
  EXPECT_EQ(tx_reclaim(q_), 1u);
  EXPECT_EQ(in_use(), with_shared - 1) << "MBUF_FAST_FREE did not take the bulk path";
  EXPECT_EQ(rte_mbuf_refcnt_read(shared), 2);
  rte_mbuf_refcnt_set(shared, 1);  // in the pool again: as it should have been
}

// MBUF_FAST_FREE promises one pool, refcnt 1 and direct mbufs, not one segment (DPDK 26.07 says so;
// earlier releases never promised it): a chained packet goes back whole, its second segment too.
TEST_F(TxFastPathTest, FastFreeReturnsEverySegmentOfAChain) {
  q_.fast_free = 1;
  q_.max_segs = 2;
  rte_mbuf* head = packet();
  ASSERT_EQ(rte_pktmbuf_chain(head, packet()), 0);
  std::vector<rte_mbuf*> pkts{head, packet()};
  ASSERT_EQ(in_use(), 3u);
  const eth_tx_burst_t burst = select_tx_burst(RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
  ASSERT_EQ(burst(&q_, pkts.data(), 2), 2);
  complete(q_.sq.head_bu - 1);
  EXPECT_EQ(tx_reclaim(q_), 2u);
  EXPECT_EQ(in_use(), 0u) << "a segment of the chain stayed out of the pool";
}

// A packet tx_prepare seeded carries the queue's flag; the burst trusts it (and clears it), and
// seeds a packet without it.
TEST_F(TxFastPathTest, BurstTrustsThePreparedSeedOnce) {
  use_seeded_flag();
  const eth_tx_burst_t csum =
      select_tx_burst(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
  rte_mbuf* m = udp_ipv4_packet(1);
  uint16_t* field = udp_checksum_field(m);
  const uint16_t seed = seed_of(m);
  std::vector<rte_mbuf*> pkts{m};
  ASSERT_EQ(tx_prepare(&q_, pkts.data(), 1), 1);
  EXPECT_EQ(*field, seed);
  EXPECT_NE(m->ol_flags & q_.seeded_flag, 0u);
  *field = 0x5555;  // not what an application may do: shows that the burst did not look again
  rte_mbuf_refcnt_update(m, 1);
  ASSERT_EQ(csum(&q_, pkts.data(), 1), 1);
  EXPECT_EQ(*field, 0x5555);
  EXPECT_EQ(m->ol_flags & q_.seeded_flag, 0u);
  complete(0);
  tx_reclaim(q_);
  ASSERT_EQ(rte_mbuf_refcnt_read(m), 1);
  ASSERT_EQ(csum(&q_, pkts.data(), 1), 1);  // the flag is gone: the burst seeds
  EXPECT_EQ(*field, seed);
}

// A packet tx_prepare did not see: the burst's common-case seed (seed_common_case, in the pass
// before its WQE loop) gives what the general rule (seed_l4_checksum) gives, and whatever the rule
// refuses stays unsent, unwritten and counted. Random requests (the five flag bits), header and
// data lengths, sharing; the reference runs on a copy of each packet.
TEST_F(TxFastPathTest, BurstSeedsUnpreparedPacketsAsTheGeneralRuleDoes) {
  const eth_tx_burst_t csum = select_tx_burst(
      RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM);
  std::mt19937 rng(20261208);
  constexpr uint16_t kLen = 128;
  static constexpr uint8_t kL2[] = {0, 13, 14, 18, 100};
  static constexpr uint16_t kL3[] = {0, 19, 20, 24, 39, 40, 60};
  unsigned sent_total = 0, refused_total = 0;
  for (int i = 0; i < 4000; i++) {
    rte_mbuf* m = packet(kLen);
    rte_mbuf* ref = packet(kLen);
    uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
    for (uint16_t b = 0; b < kLen; b++) d[b] = static_cast<uint8_t>(rng());
    d[14] = (i % 2) ? 0x45 : static_cast<uint8_t>(0x40 | (rng() % 16));
    m->ol_flags = uint64_t{rng() % 32} << kTxCsumFlagsShift;
    m->l2_len = kL2[rng() % std::size(kL2)];
    m->l3_len = kL3[rng() % std::size(kL3)];
    // Mostly around where a UDP or TCP checksum field would end: each side of every length rule.
    const int around =
        m->l2_len + m->l3_len + ((rng() % 2) ? 8 : 18) + static_cast<int>(rng() % 7) - 3;
    const int len = (rng() % 4 == 0) ? static_cast<int>(1 + rng() % kLen) : around;
    m->data_len = static_cast<uint16_t>(std::clamp(len, 1, int{kLen}));
    m->pkt_len = m->data_len;
    std::memcpy(rte_pktmbuf_mtod(ref, uint8_t*), d, kLen);
    ref->ol_flags = m->ol_flags;
    ref->tx_offload = m->tx_offload;
    ref->data_len = m->data_len;
    ref->pkt_len = m->pkt_len;
    const bool shared = rng() % 4 == 0;
    if (shared) {
      rte_mbuf_refcnt_update(m, 1);
      rte_mbuf_refcnt_update(ref, 1);
    }
    const bool want_sent = seed_l4_checksum(ref) == SeedResult::kDone;
    const uint64_t refusals_before = q_.stats.csum_headers_split + q_.stats.csum_readonly;
    const uint16_t sent = csum(&q_, &m, 1);
    ASSERT_EQ(sent, want_sent ? 1 : 0) << "case " << i;
    ASSERT_EQ(std::memcmp(d, rte_pktmbuf_mtod(ref, uint8_t*), kLen), 0) << "case " << i;
    ASSERT_EQ(q_.stats.csum_headers_split + q_.stats.csum_readonly, refusals_before + !sent)
        << "case " << i;
    if (sent) {
      complete(q_.sq.head_bu - 1);
      tx_reclaim(q_);
      sent_total++;
    } else {
      rte_pktmbuf_free(m);
      refused_total++;
    }
    if (shared) rte_pktmbuf_free(ref);
    rte_pktmbuf_free(ref);
    if (shared) rte_pktmbuf_free(m);
  }
  // Both outcomes were drawn often: std::mt19937's sequence is fixed by the standard, so these
  // counts are exact for the seed above (a change of the draws must update them).
  EXPECT_EQ(sent_total, 2769u);
  EXPECT_EQ(refused_total, 1231u);
  EXPECT_EQ(in_use(), 0u) << "a packet stayed out of the pool";
}

// A burst of packets tx_prepare did not see, then prepared ones, then unprepared again: the burst
// seeds only the unprepared ones, leaves the prepared ones' fields as they are, and no packet keeps
// tx_prepare's mark.
TEST_F(TxFastPathTest, AMixedBurstSeedsOnlyWhatTxPrepareDidNot) {
  use_seeded_flag();
  const eth_tx_burst_t csum =
      select_tx_burst(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
  std::vector<rte_mbuf*> pkts;
  for (uint8_t i = 0; i < 9; i++) pkts.push_back(udp_ipv4_packet(i));
  std::vector<rte_mbuf*> prepared(pkts.begin() + 3, pkts.begin() + 6);
  ASSERT_EQ(tx_prepare(&q_, prepared.data(), 3), 3);
  for (rte_mbuf* m : prepared) *udp_checksum_field(m) = 0x5555;  // shows the burst did not look
  ASSERT_EQ(csum(&q_, pkts.data(), 9), 9);
  for (size_t i = 0; i < pkts.size(); i++) {
    const bool was_prepared = i >= 3 && i < 6;
    EXPECT_EQ(*udp_checksum_field(pkts[i]), was_prepared ? 0x5555 : seed_of(pkts[i])) << i;
    EXPECT_EQ(pkts[i]->ol_flags & q_.seeded_flag, 0u) << i;
  }
  complete(8);
  tx_reclaim(q_);
  EXPECT_EQ(in_use(), 0u);
}

// The seed's few adds equal rte_ipv4_phdr_cksum / rte_ipv6_phdr_cksum on random headers (IPv4 ones
// whose total length covers the header), and on all-ones ones (carries everywhere).
TEST(TxSeed, EqualsDpdksPseudoHeaderSums) {
  std::mt19937 rng(20261124);
  alignas(8) uint8_t buf[2 + sizeof(rte_ipv6_hdr)];
  uint8_t* h = buf + 2;  // as after a 14-byte Ethernet header: 2-byte aligned
  for (int i = 0; i < 100000; i++) {
    for (uint8_t& b : buf) b = static_cast<uint8_t>(rng());
    auto* v4 = reinterpret_cast<rte_ipv4_hdr*>(h);
    v4->version_ihl = static_cast<uint8_t>(0x40 | (5 + rng() % 11));
    // Any IPv4 packet's total length covers its header (below it, DPDK's 16-bit L4 length wraps).
    if (rte_be_to_cpu_16(v4->total_length) < rte_ipv4_hdr_len(v4))
      v4->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(rte_ipv4_hdr_len(v4)));
    if (i % 1000 == 0) {  // all ones: the one's complement sum is 0xFFFF
      std::memset(h, 0xFF, sizeof(rte_ipv6_hdr));
      v4->version_ihl = 0x4F;
      v4->total_length = 0xFFFF;
    }
    ASSERT_EQ(ipv4_phdr_seed(h), rte_ipv4_phdr_cksum(v4, RTE_MBUF_F_TX_UDP_CKSUM)) << i;
    ASSERT_EQ(ipv6_phdr_seed(h),
              rte_ipv6_phdr_cksum(reinterpret_cast<rte_ipv6_hdr*>(h), RTE_MBUF_F_TX_TCP_CKSUM))
        << i;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
