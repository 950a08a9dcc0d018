// SPDX-License-Identifier: BSD-3-Clause
// Fuzzing the TX completion path (doc/hardware.md §4.5, §4.7, §4.9): random bursts (1..3 and too
// many segments, VLAN tags, every offload variant) interleaved with random and adversarial CQEs:
// okay CQEs with nothing outstanding or for any WQE offset, every error type, RX and unknown types,
// garbage dwords, wrong WQ ids, stale and overflowed owner bits; direct tx_reclaim calls
// (tx_done_cleanup). The oracle holds for any reclaim policy that completes in posting order:
// every produced CQE is taken and every error CQE counted by type; the outstanding descriptors are
// the last ones sent, in order, and account exactly for the SQ's used basic units and the pool's
// used mbufs (no leak, no double free); and once the NIC completes every outstanding WQE with a
// valid CQE (the unsuppressed ones, by WQE offset), nothing stays outstanding.
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "../fuzz/fuzz_walk.h"
#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_tx_queue.h"

namespace {

using namespace mana;
using mana::fuzz::FuzzInput;

constexpr uint32_t kSeed = 20261124;
// Steps of the random walk: 0.64 million CQEs and 1.7 million packets (the summary line), 0.6 s
// in build/, 5.5 s in the debug ASan build.
constexpr unsigned kSteps = 200000;

class TxCompletionFuzz : public mana_test::FakeTxPort {
 protected:
  uint32_t popped() const { return q_.cq.head - kRing; }  // CQEs the consumer took
  uint32_t cq_free() const { return kRing - static_cast<uint32_t>(txq_.cq.produced() - popped()); }

  rte_mbuf* packet(FuzzInput& in, unsigned segs) {
    rte_mbuf* head = nullptr;
    for (unsigned s = 0; s < segs; s++) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      if (m == nullptr) break;  // the pool is smaller than a ring of 16-segment packets
      rte_pktmbuf_append(m, static_cast<uint16_t>(1 + in.below(1514)));
      if (head == nullptr)
        head = m;
      else if (rte_pktmbuf_chain(head, m) != 0)
        rte_pktmbuf_free(m);
    }
    if (head != nullptr && in.chance(4)) {
      head->ol_flags |= RTE_MBUF_F_TX_VLAN;
      head->vlan_tci = static_cast<uint16_t>(in.next());
    }
    return head;
  }

  // A burst of 0..80 packets; the ones not taken go back to the pool (the application keeps them).
  void send(FuzzInput& in) {
    const unsigned n = in.below(81);
    std::vector<rte_mbuf*> pkts;
    for (unsigned i = 0; i < n; i++) {
      const unsigned segs = in.chance(64) ? 16 : 1 + in.below(multi_seg_ ? 3 : 1);
      if (rte_mbuf* m = packet(in, segs)) pkts.push_back(m);
    }
    const uint32_t tail0 = q_.desc_tail;
    const uint16_t sent = burst_(&q_, pkts.data(), static_cast<uint16_t>(pkts.size()));
    ASSERT_LE(sent, pkts.size());
    ASSERT_NO_FATAL_FAILURE(completed(q_.desc_tail - tail0));
    for (uint16_t i = 0; i < sent; i++) {
      sent_.push_back(Sent{pkts[i], pkts[i]->nb_segs});
      segs_ += pkts[i]->nb_segs;
    }
    packets_ += sent;
    for (size_t i = sent; i < pkts.size(); i++) rte_pktmbuf_free(pkts[i]);
    ASSERT_NO_FATAL_FAILURE(check());
  }

  void reclaim() {
    const uint32_t tail0 = q_.desc_tail;
    const uint32_t done = tx_reclaim(q_);
    ASSERT_EQ(done, q_.desc_tail - tail0);
    ASSERT_NO_FATAL_FAILURE(completed(done));
    ASSERT_NO_FATAL_FAILURE(check());
  }

  // `n` descriptors completed: the oldest sent packets, whose mbufs the driver freed.
  void completed(uint32_t n) {
    ASSERT_LE(n, sent_.size()) << "completed more than was outstanding";
    for (uint32_t i = 0; i < n; i++) {
      segs_ -= sent_.front().segs;
      sent_.pop_front();
    }
  }

  // The invariants after any call into the driver.
  void check() {
    ASSERT_EQ(popped(), txq_.cq.produced()) << "a produced CQE was left, or one taken twice";
    ASSERT_EQ(q_.desc_head - q_.desc_tail, sent_.size());
    ASSERT_LE(q_.desc_head - q_.desc_tail, kRing);
    uint32_t bu = 0;
    // (A completed entry keeps a stale pointer: in_use() below tells whether it was freed once.)
    for (uint32_t i = 0; i < sent_.size(); i++) {
      const uint32_t at = (q_.desc_tail + i) & (kRing - 1);
      ASSERT_EQ(q_.mbufs[at], sent_[i].m)
          << "outstanding descriptor " << i << " is not the packet sent";
      bu += q_.descs[at].bu;
    }
    ASSERT_EQ(q_.sq.head_bu - q_.sq.tail_bu, bu) << "SQ space out of step with the descriptors";
    ASSERT_LE(bu, q_.sq.capacity_bu);
    if (!sent_.empty()) {  // the last WQE of every burst asks for a CQE
      ASSERT_EQ(q_.descs[(q_.desc_head - 1) & (kRing - 1)].suppressed, 0);
    }
    ASSERT_EQ(in_use(), segs_) << "mbufs leaked or freed twice";
    ASSERT_EQ(q_.stats.packets, packets_);
    ASSERT_EQ(q_.stats.errors, errors_);
    ASSERT_EQ(q_.stats.misdirected_cqes, misdirected_);
    for (unsigned k = 0; k < kTxCqeErrorKinds; k++)
      ASSERT_EQ(q_.stats.cqe_errors[k], cqe_errors_[k]) << "kind " << k;
  }

  // The basic-unit offset of outstanding descriptor `i` (doc/hardware.md §4.7: the emulator's
  // tx_wqe_offset).
  uint32_t wqe_offset(uint32_t i) const {
    uint32_t bu = q_.sq.tail_bu;
    for (uint32_t j = 0; j < i; j++) bu += q_.descs[(q_.desc_tail + j) & (kRing - 1)].bu;
    return bu & hw::Cqe::TxWqeOffset::kMask;
  }

  hw::Cqe random_cqe(FuzzInput& in) {
    hw::Cqe e;
    for (uint32_t& d : e.dw) d = in.chance(2) ? in.next() : 0;
    const uint32_t pick = in.below(8);
    uint32_t type = in.below(64);  // anything the 6-bit field holds, RX types too
    if (pick < 4)
      type = hw::kCqeTxOkay;
    else if (pick < 6)
      type = hw::kCqeTxSaDrop + in.below(9);
    e.dw[0] = hw::Cqe::Type::set(e.dw[0], type);
    if (in.below(4) != 0) e.dw[0] = hw::Cqe::ClientType::set(e.dw[0], hw::kClientTypeCompletion);
    // A plausible WQE offset (an outstanding WQE's) or garbage.
    if (!sent_.empty() && in.chance(2)) {
      const uint32_t i = in.below(static_cast<uint32_t>(sent_.size()));
      e.dw[hw::Cqe::kTxWqeOffsetDword] = hw::Cqe::TxWqeOffset::set(0, wqe_offset(i));
    }
    uint32_t dw15 = e.dw[hw::Cqe::kOwnerDword];
    if (in.below(4) != 0) dw15 = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(dw15, kSqId), 1);
    e.dw[hw::Cqe::kOwnerDword] = dw15;
    return e;
  }

  // A CQE whose dw15 or client type names another queue is skipped and counted (doc/hardware.md
  // §4.7); the others count by type.
  void produce(const hw::Cqe& e) {
    const uint32_t type = hw::Cqe::Type::get(e.dw[0]);
    const uint32_t dw15 = e.dw[hw::Cqe::kOwnerDword];
    if (hw::Cqe::WqNum::get(dw15) != kSqId || hw::Cqe::IsSq::get(dw15) != 1 ||
        hw::Cqe::ClientType::get(e.dw[0]) != hw::kClientTypeCompletion) {
      misdirected_++;
    } else if (type != hw::kCqeTxOkay) {
      errors_++;
      const bool known = type >= hw::kCqeTxSaDrop && type <= hw::kCqeTxVlanTaggingViolation;
      cqe_errors_[known ? type - hw::kCqeTxSaDrop : kTxCqeErrorKinds - 1]++;
    }
    txq_.cq.produce(e);
    cqes_++;
  }

  void produce_random(FuzzInput& in, unsigned n) {
    for (unsigned i = 0; i < n && cq_free() > 0; i++) produce(random_cqe(in));
  }

  // The entry after the last produced one gets owner bits the consumer must not take: those of
  // the previous lap (stale: empty) or of another lap (overflow). The next produce overwrites it.
  void poison_next(FuzzInput& in) {
    if (cq_free() == 0) return;
    const uint32_t owner = txq_.cq.next_owner();
    const uint32_t bad = in.chance(2) ? owner - 1 : owner + 1 + in.below(6);
    txq_.cq.write_next(random_cqe(in), bad & hw::kOwnerMask);
  }

  // The NIC completes every outstanding WQE as it should: one okay CQE per WQE that asked for one,
  // naming it. Afterwards nothing is outstanding.
  void settle() {
    ASSERT_NO_FATAL_FAILURE(reclaim());  // the adversarial CQEs first
    for (uint32_t i = 0; i < sent_.size(); i++) {
      if (q_.descs[(q_.desc_tail + i) & (kRing - 1)].suppressed) continue;
      hw::Cqe e{};
      e.dw[0] = hw::Cqe::ClientType::set(hw::kCqeTxOkay, hw::kClientTypeCompletion);
      e.dw[hw::Cqe::kTxWqeOffsetDword] = hw::Cqe::TxWqeOffset::set(0, wqe_offset(i));
      e.dw[hw::Cqe::kOwnerDword] = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kSqId), 1);
      produce(e);
    }
    ASSERT_NO_FATAL_FAILURE(reclaim());
    ASSERT_TRUE(sent_.empty()) << sent_.size() << " descriptors stuck after valid completions";
    ASSERT_EQ(q_.sq.tail_bu, q_.sq.head_bu);
    ASSERT_EQ(in_use(), 0u);
  }

  void select_offloads(uint32_t bits) {
    const uint64_t offloads =
        ((bits & 1) ? RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM : 0) |
        ((bits & 2) ? RTE_ETH_TX_OFFLOAD_MULTI_SEGS : 0) |
        ((bits & 4) ? RTE_ETH_TX_OFFLOAD_VLAN_INSERT : 0);
    burst_ = select_tx_burst(offloads);
    multi_seg_ = bits & 2;
    q_.max_segs = multi_seg_ ? q_.max_sge : 1;
    // Every packet here keeps MBUF_FAST_FREE's promise (one pool, refcnt 1, direct), chains too.
    q_.fast_free = (bits & 8) != 0;
  }

  eth_tx_burst_t burst_ = nullptr;
  bool multi_seg_ = false;
  struct Sent {
    rte_mbuf* m;
    uint16_t segs;  // its mbufs (a freed chain no longer tells)
  };
  std::deque<Sent> sent_;  // sent, not yet completed, oldest first
  uint64_t segs_ = 0;      // mbufs (segments) of sent_
  uint64_t packets_ = 0, cqes_ = 0, errors_ = 0, misdirected_ = 0;
  uint64_t cqe_errors_[kTxCqeErrorKinds] = {};
};

TEST_F(TxCompletionFuzz, RandomAndAdversarialCompletions) {
  select_offloads(15);  // then random ones after each settle
  unsigned settles = 0;
  const mana::fuzz::WalkResult walk = mana::fuzz::random_walk(kSeed, kSteps, [&](FuzzInput& in) {
    const uint32_t action = in.below(16);
    if (action < 6) {
      produce_random(in, 1 + in.below(16));
    } else if (action == 6) {
      poison_next(in);
      reclaim();
    } else if (action == 7) {
      reclaim();
    } else if (action == 8 && in.chance(16)) {
      settle();
      settles++;
      select_offloads(in.next());
    } else {
      send(in);
    }
  });
  ASSERT_NO_FATAL_FAILURE(settle());
  std::printf(
      "tx completion fuzz: seed %u, %u steps, %llu CQEs, %llu packets sent, %llu error CQEs, "
      "%u settles, %.1f s\n",
      walk.seed, walk.steps, static_cast<unsigned long long>(cqes_),
      static_cast<unsigned long long>(packets_), static_cast<unsigned long long>(errors_), settles,
      walk.seconds);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
