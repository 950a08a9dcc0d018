// SPDX-License-Identifier: BSD-3-Clause
// Fuzzing the RX completion path (doc/hardware.md §4.5, §4.7): random and adversarial CQEs through
// the RX burst: every CQE type (okay, coalesced, the error types, unknown and TX types), 0..4
// packet entries with zeros anywhere, lengths 0..65535 (beyond the buffer too), garbage flags,
// wrong WQ ids, stale and overflowed owner bits, mbuf exhaustion. A model of what each CQE must do
// (built from the doc, not from the driver) checks after every burst: every delivered mbuf is the
// next posted one and stays inside its buffer, no mbuf is leaked or delivered twice, the ring is
// full again, the consumer never takes an entry the NIC did not produce, and the counters add up.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <deque>
#include <string>
#include <unordered_set>
#include <vector>

#include "../fuzz/fuzz_walk.h"
#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_rx_queue.h"

namespace {

using namespace mana;
using mana::fuzz::FuzzInput;

constexpr uint32_t kRing = 64;  // RQ WQEs and CQ entries; the burst takes at most 64 WQEs too
constexpr uint32_t kRqId = 0x1234;
constexpr uint32_t kCqId = 9;
constexpr uint32_t kSeed = 20261124;
// Steps of the random walk, for each RX implementation: 8.6 s for the three of x86-64 in build/,
// 27 s in the debug ASan build, where scripts/test.sh has it walk a quarter (7.6 s).
constexpr unsigned kSteps = 400000;

// What the consumption of one RQ WQE must produce: a packet of `len` bytes (`tagged`: the CQE
// reports a stripped VLAN tag) or an error, the buffer going back into the ring.
struct WqeEvent {
  bool good;
  bool tagged;
  uint16_t len;
};

// What taking one CQE off the CQ must count.
struct CqeEffect {
  int error_kind;  // RX error-kind index, -1 for okay and coalesced CQEs
  bool zero_length;
  unsigned oversize;  // packets longer than the buffer
  bool misdirected;   // names another queue: skipped
  bool dropped;       // a truncated packet: consumed a WQE, an error
};

struct Counters {
  uint64_t errors = 0, zero_length = 0, oversize = 0, packets = 0, bytes = 0, misdirected = 0;
  uint64_t cqe_errors[kRxCqeErrorKinds] = {};
};

// Run on every RX implementation (burst.h RxSimd) this build and CPU have; the others are skipped.
class RxCompletionFuzz : public mana_test::FakePort, public ::testing::WithParamInterface<RxSimd> {
 protected:
  void SetUp() override {
    if (!rx_simd_supported(GetParam()))
      GTEST_SKIP() << rx_simd_name(GetParam()) << ": not in this build or not on this CPU";
    FakePort::SetUp();
    rxq_.start(state_);
  }
  void TearDown() override {
    if (IsSkipped()) return;
    for (rte_mbuf* m : held_) rte_pktmbuf_free(m);
    rte_pktmbuf_free_bulk(hog_.data(), static_cast<unsigned>(hog_.size()));
    rxq_.stop();
    FakePort::TearDown();
  }

  uint32_t popped() const { return q_.cq.head - kRing; }  // CQEs the consumer took
  uint32_t cq_free() const { return kRing - static_cast<uint32_t>(rxq_.cq.produced() - popped()); }

  uint16_t length(FuzzInput& in) {
    const uint32_t buf = q_.buf_len;
    switch (in.below(6)) {
      case 0:
        return static_cast<uint16_t>(buf - 2 + in.below(5));  // around the buffer's end
      case 1:
        return static_cast<uint16_t>(in.next());  // anything, 0 included
      case 2:
        return static_cast<uint16_t>(1 + in.below(14));  // shorter than an Ethernet header
      default:
        return static_cast<uint16_t>(1 + in.below(1514));
    }
  }

  // One CQE of any type with garbage wherever the format allows it; the model learns what it
  // must do. Half of them the common CQE the vector kernels take four at a time (okay, one packet
  // that fits, mostly the same flags): random ones almost never come four in a row, and the
  // kernels' own checks (owner bits, the queue a CQE names) are fuzzed only on such runs.
  hw::Cqe random_cqe(FuzzInput& in) {
    hw::Cqe e;
    if (in.chance(2)) {
      e.dw[0] = hw::kCqeRxOkay;
      e.dw[hw::Cqe::kRxFlagsDword] = in.chance(8) ? in.next() : 0;
      e.rx_packet(0).dw0 = hw::RxPacketInfo::Length::set(0, 1 + in.below(q_.buf_len));
      bind_to_queue(in, e);
      return e;
    }
    for (uint32_t& d : e.dw) d = in.chance(2) ? in.next() : 0;
    // Mostly the types an RX CQ gets, a quarter anything the 6-bit field holds (TX types too).
    const uint32_t pick = in.below(20);
    uint32_t type = in.below(64);
    if (pick < 6)
      type = hw::kCqeRxOkay;
    else if (pick < 11)
      type = hw::kCqeRxCoalesced4;
    else if (pick < 15)
      type = std::array{hw::kCqeInvalid, hw::kCqeRxObjectFence, hw::kCqeRxTruncated,
                        hw::kCqeTxOkay}[pick - 11];
    e.dw[0] = hw::Cqe::Type::set(e.dw[0], type);
    // Packet entries: `count` leading non-zero lengths, then a zero; or garbage with zeros
    // anywhere.
    const bool garbage = in.chance(8);
    const unsigned count = in.below(hw::Cqe::kRxMaxPackets + 1);
    for (unsigned k = 0; k < hw::Cqe::kRxMaxPackets; k++) {
      uint16_t len = k < count ? length(in) : 0;
      if (garbage) len = in.chance(3) ? 0 : length(in);
      if (k < count && len == 0 && !garbage) len = 1;
      e.rx_packet(k).dw0 = hw::RxPacketInfo::Length::set(e.rx_packet(k).dw0, len);
    }
    bind_to_queue(in, e);
    return e;
  }

  // Queue binding: ours, or (one in four) what dw15 held: a wrong WQ id, or the SQ bit set.
  static void bind_to_queue(FuzzInput& in, hw::Cqe& e) {
    uint32_t dw15 = e.dw[hw::Cqe::kOwnerDword];
    if (in.below(4) != 0) dw15 = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(dw15, kRqId), 0);
    e.dw[hw::Cqe::kOwnerDword] = dw15;
  }

  // The model (doc/hardware.md §4.7 and the table of completion types): a CQE whose dw15 names
  // another queue (wq_num, is_sq) is skipped and counted; okay and coalesced CQEs report the
  // packet entries up to the first zero length, each having consumed the next WQE; a zero first
  // length consumed none; a truncated packet consumed one WQE and is an error; every other type
  // (object fence, invalid, unknown) consumed none and is counted by type.
  void expect(const hw::Cqe& e) {
    CqeEffect eff{-1, false, 0, false, false};
    const uint32_t type = hw::Cqe::Type::get(e.dw[0]);
    const bool tagged = hw::Cqe::RxVlanPresent::get(e.dw[hw::Cqe::kRxFlagsDword]) != 0;
    const uint32_t dw15 = e.dw[hw::Cqe::kOwnerDword];
    if (hw::Cqe::WqNum::get(dw15) != kRqId || hw::Cqe::IsSq::get(dw15) != 0) {
      eff.misdirected = true;
    } else if (type == hw::kCqeRxOkay || type == hw::kCqeRxCoalesced4) {
      unsigned k = 0;
      for (; k < hw::Cqe::kRxMaxPackets; k++) {
        const auto len = static_cast<uint16_t>(hw::RxPacketInfo::Length::get(e.rx_packet(k).dw0));
        if (len == 0) break;
        const bool fits = len <= q_.buf_len;
        if (!fits) eff.oversize++;
        wqes_.push_back(WqeEvent{fits, tagged, len});
      }
      eff.zero_length = k == 0;
    } else {
      eff.error_kind = type == hw::kCqeInvalid         ? 0
                       : type == hw::kCqeRxObjectFence ? 1
                       : type == hw::kCqeRxTruncated   ? 2
                                                       : 3;
      eff.dropped = type == hw::kCqeRxTruncated;
      if (eff.dropped) wqes_.push_back(WqeEvent{false, false, 0});
    }
    cqes_.push_back(eff);
  }

  void produce(FuzzInput& in, unsigned n) {
    for (unsigned i = 0; i < n && cq_free() > 0; i++) {
      const hw::Cqe e = random_cqe(in);
      expect(e);
      rxq_.cq.produce(e);
      produced_cqes_++;
      overflow_next_ = false;
    }
  }

  // The entry after the last produced one gets owner bits the consumer must not take: those of
  // the previous lap (stale: empty) or of another lap (overflow). The next produce overwrites it.
  void poison_next(FuzzInput& in) {
    if (cq_free() == 0) return;
    const uint32_t owner = rxq_.cq.next_owner();
    overflow_next_ = in.chance(2);
    const uint32_t bad = overflow_next_ ? owner + 1 + in.below(6) : owner - 1;
    rxq_.cq.write_next(random_cqe(in), bad & hw::kOwnerMask);
  }

  // One burst of `want` packets, checked against the model.
  void burst(uint16_t want) {
    std::vector<rte_mbuf*> before(rxq_.slots());
    const uint32_t tail0 = q_.rq.tail_bu;
    const uint64_t nombuf0 = q_.stats.nombuf, overflows0 = q_.stats.cq_overflows;
    // Nothing to take before the overflowed entry: the burst must look at it, once.
    const bool at_overflow =
        overflow_next_ && want > 0 && q_.partial_cqe == nullptr && popped() == rxq_.cq.produced();
    rte_mbuf* pkts[128];
    const uint16_t n = burst_(&q_, pkts, want);
    ASSERT_LE(n, want);
    ASSERT_LE(q_.stats.cq_overflows - overflows0, overflow_next_ ? 1u : 0u);
    if (at_overflow) {
      ASSERT_EQ(q_.stats.cq_overflows - overflows0, 1u);
    }
    ASSERT_LE(popped(), rxq_.cq.produced()) << "took a CQE the NIC did not produce";
    const uint32_t consumed = q_.rq.tail_bu - tail0;
    ASSERT_LE(consumed, wqes_.size()) << "consumed more WQEs than the CQEs reported";
    ASSERT_LE(consumed, kRing);
    unsigned good = 0, delivered = 0;
    for (uint32_t i = 0; i < consumed; i++) {
      const WqeEvent ev = wqes_.front();
      wqes_.pop_front();
      if (!ev.good) continue;
      good++;
      if (delivered == n) continue;  // no replacement mbuf: dropped, the buffer stays posted
      rte_mbuf* m = pkts[delivered++];
      ASSERT_EQ(m, before[(tail0 + i) & (kRing - 1)]) << "not the posted buffer of WQE " << i;
      ASSERT_TRUE(held_.insert(m).second) << "mbuf delivered twice";
      const uint32_t len = ev.len + (ev.tagged && !vlan_strip_ ? RTE_VLAN_HLEN : 0);
      ASSERT_EQ(m->pkt_len, len);
      ASSERT_EQ(m->data_len, len);
      ASSERT_EQ(m->nb_segs, 1);
      ASSERT_LE(uint32_t{m->data_off} + m->data_len, m->buf_len) << "beyond the mbuf's buffer";
      ASSERT_GE(m->data_off, RTE_PKTMBUF_HEADROOM - RTE_VLAN_HLEN);
      expected_.packets++;
      expected_.bytes += len;
    }
    ASSERT_EQ(delivered, n) << "delivered packets the CQEs did not report";
    ASSERT_EQ(q_.stats.nombuf - nombuf0, good - n);
    // The ring is full again; the slots refilled hold no delivered mbuf (the others are as
    // before).
    ASSERT_EQ(q_.rq.head_bu - q_.rq.tail_bu, kRing);
    for (uint32_t i = 0; i < consumed; i++) {
      rte_mbuf* m = rxq_.slots()[(tail0 + i) & (kRing - 1)];
      ASSERT_NE(m, nullptr);
      ASSERT_EQ(held_.count(m), 0u) << "a delivered mbuf is still posted";
    }
    ASSERT_EQ(in_use(), kRing + held_.size() + hog_.size()) << "mbufs leaked or double-freed";
    if (q_.partial_cqe == nullptr) check_counters();
  }

  // With no CQE half-delivered, the counters are the sum over the CQEs taken.
  void check_counters() {
    for (; counted_ < popped(); counted_++) {
      const CqeEffect eff = cqes_.front();
      cqes_.pop_front();
      if (eff.error_kind >= 0) expected_.cqe_errors[eff.error_kind]++;
      expected_.errors += eff.dropped;
      expected_.misdirected += eff.misdirected;
      expected_.zero_length += eff.zero_length;
      expected_.oversize += eff.oversize;
      expected_.errors += eff.oversize;
    }
    ASSERT_EQ(q_.stats.errors, expected_.errors);
    ASSERT_EQ(q_.stats.oversize_packets, expected_.oversize);
    ASSERT_EQ(q_.stats.zero_length_cqes, expected_.zero_length);
    ASSERT_EQ(q_.stats.misdirected_cqes, expected_.misdirected);
    ASSERT_EQ(q_.stats.packets, expected_.packets);
    ASSERT_EQ(q_.stats.bytes, expected_.bytes);
    for (unsigned k = 0; k < kRxCqeErrorKinds; k++)
      ASSERT_EQ(q_.stats.cqe_errors[k], expected_.cqe_errors[k]) << "kind " << k;
  }

  // Bursts until the CQ is empty and no CQE is half-delivered; then every produced CQE was taken.
  void drain(FuzzInput& in) {
    for (unsigned i = 0; i < 2 * kRing + 2; i++) {
      ASSERT_NO_FATAL_FAILURE(burst(static_cast<uint16_t>(1 + in.below(64))));
      if (popped() == rxq_.cq.produced() && q_.partial_cqe == nullptr) break;
    }
    ASSERT_EQ(popped(), rxq_.cq.produced()) << "CQEs left on the CQ";
    ASSERT_EQ(q_.partial_cqe, nullptr);
    ASSERT_TRUE(wqes_.empty());
    ASSERT_NO_FATAL_FAILURE(check_counters());
  }

  void release_held(FuzzInput& in) {
    for (auto it = held_.begin(); it != held_.end();) {
      if (in.chance(2)) {
        rte_pktmbuf_free(*it);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Now and then takes every free mbuf (the refill fails: nombuf), else gives them back.
  void starve_or_feed(FuzzInput& in) {
    if (in.chance(32)) {
      for (rte_mbuf* m; (m = rte_pktmbuf_alloc(pool_)) != nullptr;) hog_.push_back(m);
    } else if (!hog_.empty()) {
      rte_pktmbuf_free_bulk(hog_.data(), static_cast<unsigned>(hog_.size()));
      hog_.clear();
    }
  }

  void select_offloads(uint32_t bits) {
    const uint64_t offloads = ((bits & 1) ? RTE_ETH_RX_OFFLOAD_CHECKSUM : 0) |
                              ((bits & 2) ? RTE_ETH_RX_OFFLOAD_RSS_HASH : 0) |
                              ((bits & 4) ? RTE_ETH_RX_OFFLOAD_VLAN_STRIP : 0);
    burst_ = select_rx_burst(offloads, GetParam());
    vlan_strip_ = bits & 4;
  }

  mana_test::FakeRxQueue rxq_{kRing, kRqId, kCqId};
  RxQueue& q_ = rxq_.q;
  eth_rx_burst_t burst_ = nullptr;
  bool vlan_strip_ = false;
  std::deque<WqeEvent> wqes_;   // WQE consumptions reported by produced CQEs, not yet taken
  std::deque<CqeEffect> cqes_;  // effects of produced CQEs not yet counted
  uint32_t counted_ = 0;        // CQEs whose effects are in expected_
  Counters expected_;
  std::unordered_set<rte_mbuf*> held_;  // delivered, not yet freed by the application
  std::vector<rte_mbuf*> hog_;          // taken from the pool to starve the refill
  uint64_t produced_cqes_ = 0;
  bool overflow_next_ = false;  // the slot after the last produced CQE holds an overflowed entry
};

TEST_P(RxCompletionFuzz, RandomAndAdversarialCompletions) {
  select_offloads(7);  // then random ones after each drain
  const mana::fuzz::WalkResult walk = mana::fuzz::random_walk(kSeed, kSteps, [&](FuzzInput& in) {
    const uint32_t action = in.below(16);
    if (action < 6) {
      produce(in, 1 + in.below(16));
    } else if (action == 6) {
      poison_next(in);
      burst(64);
    } else if (action == 7) {
      release_held(in);
    } else if (action == 8) {
      starve_or_feed(in);
    } else if (action == 9 && in.chance(32)) {
      drain(in);
      select_offloads(in.next());
    } else {
      burst(static_cast<uint16_t>(in.below(100)));
    }
    if (held_.size() > 512) release_held(in);
  });
  FuzzInput in(walk.seed);
  ASSERT_NO_FATAL_FAILURE(drain(in));
  std::printf(
      "rx completion fuzz (%s): seed %u, %u steps, %llu CQEs, %llu packets, %llu errors "
      "(%llu oversize), %llu zero-length, %llu nombuf, %llu overflow polls, %.1f s\n",
      rx_simd_name(GetParam()), walk.seed, walk.steps,
      static_cast<unsigned long long>(produced_cqes_),
      static_cast<unsigned long long>(q_.stats.packets),
      static_cast<unsigned long long>(q_.stats.errors),
      static_cast<unsigned long long>(q_.stats.oversize_packets),
      static_cast<unsigned long long>(q_.stats.zero_length_cqes),
      static_cast<unsigned long long>(q_.stats.nombuf),
      static_cast<unsigned long long>(q_.stats.cq_overflows), walk.seconds);
}

// A NIC that laps the consumer (more CQEs than the CQ holds) overwrites entries: the consumer sees
// owner bits of the next lap and must take nothing and deliver nothing, every time it polls, and
// count the overflow.
TEST_P(RxCompletionFuzz, LappedCqDeliversNothing) {
  select_offloads(0);
  for (uint32_t i = 0; i < kRing + 3; i++) {
    rxq_.cq.produce([](hw::Cqe& e) {
      e.dw[0] = hw::kCqeRxOkay;
      e.rx_packet(0).dw0 = 60;
    });
  }
  rte_mbuf* pkts[64];
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(burst_(&q_, pkts, 64), 0);
  }
  EXPECT_EQ(popped(), 0u);
  EXPECT_EQ(q_.rq.tail_bu, 0u);
  EXPECT_EQ(q_.stats.packets + q_.stats.errors + q_.stats.zero_length_cqes, 0u);
  EXPECT_EQ(q_.stats.cq_overflows, 3u);  // seen by every poll
  EXPECT_EQ(in_use(), kRing);
}

INSTANTIATE_TEST_SUITE_P(Variants, RxCompletionFuzz, ::testing::ValuesIn(kRxSimdAll),
                         [](const ::testing::TestParamInfo<RxSimd>& p) {
                           std::string name = rx_simd_name(p.param);
                           std::erase_if(name, [](char c) { return !std::isalnum(c); });
                           return name;
                         });

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
