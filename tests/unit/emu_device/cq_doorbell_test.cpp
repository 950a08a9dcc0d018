// SPDX-License-Identifier: BSD-3-Clause
// The CQ doorbell rule (hw cq-doorbell; mana_en.c: the hardware "requires at least one doorbell
// ring every 8 wraparounds of CQ even if there is no need to arm the CQ"): a CQE that would put
// the producer 8·count or more past the index of the last CQ doorbell stalls the CQ (stall) or
// fails its queues (error); off ignores the rule.
#include <gtest/gtest.h>

#include <algorithm>

#include "driver.h"
#include "frames.h"
#include "rx_common.h"

namespace mana::emu::test {
namespace {

using Rule = HwBehaviour::CqDoorbellRule;

constexpr uint32_t kCqCount = 16;
constexpr uint32_t kLimit = 8 * kCqCount - 1;  // CQEs the device writes without a CQ doorbell

VfConfig config_with(Rule rule) {
  VfConfig c = test_config(1);
  c.hw.cq_doorbell = rule;
  return c;
}

std::vector<uint8_t> frame() {
  FlowSpec f;
  f.src = {198, 18, 0, 1};
  f.dst = {198, 18, 0, 2};
  f.src_mac = port_mac(0);
  f.dst_mac = port_mac(0);
  return build_frame(f);
}

// A raw QP whose 16-entry CQ is drained after every batch, like a poll-mode driver that never
// rings the CQ doorbell (DPDK's net_mana only rings it to arm RX interrupts).
struct TxBench {
  explicit TxBench(Rule rule) : d(config_with(rule)), tx(d, 1, 8192, kCqCount) {
    EXPECT_EQ(tx.status, 0);
  }
  // Posts `n` frames in batches that fit the CQ; returns the CQEs seen. `doorbell_every`: ring
  // a CQ doorbell (arm = 0) after that many CQEs were consumed (0: never).
  unsigned send(unsigned n, unsigned doorbell_every = 0) {
    unsigned seen = 0;
    for (unsigned done = 0; done < n;) {
      const unsigned batch = std::min(n - done, kCqCount);
      for (unsigned i = 0; i < batch; ++i) tx.post_frame(frame());
      done += batch;
      tx.doorbell();
      d.dev().poll();
      while (const hw::Cqe* c = tx.cq.next()) {
        EXPECT_EQ(c->type(), hw::kCqeTxOkay);
        ++seen;
        if (doorbell_every != 0 && ++since_doorbell_ == doorbell_every) cq_doorbell();
      }
    }
    return seen;
  }
  unsigned drain() {
    d.dev().poll();
    unsigned seen = 0;
    while (tx.cq.next()) ++seen;
    return seen;
  }
  void cq_doorbell(bool arm = false) {
    since_doorbell_ = 0;
    d.dev().ring(d.ctx, hw::kCqDoorbellOffset, hw::cq_doorbell(tx.cq.id, tx.cq.arm_index(), arm));
  }
  QueueCounters counters() { return d.dev().sq_counters(tx.binding.sq_id); }
  Driver d;
  TxQueue tx;

 private:
  unsigned since_doorbell_ = 0;
};

TEST(CqDoorbellRule, OffCompletesEverythingWithoutCqDoorbells) {
  TxBench b(Rule::kOff);
  EXPECT_EQ(b.send(300), 300u);
  EXPECT_EQ(b.counters().cq_doorbell_violations, 0u);
}

TEST(CqDoorbellRule, StallStopsTheQueueAtEightWrapsUntilACqDoorbell) {
  TxBench b(Rule::kStall);
  constexpr unsigned kWaiting = 10;  // fewer than the CQ holds
  EXPECT_EQ(b.send(kLimit + kWaiting), kLimit);
  EXPECT_EQ(b.counters().wqes, kLimit);  // the rest waits in the SQ, as at a full CQ
  EXPECT_EQ(b.counters().cq_doorbell_violations, 1u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.drain(), 0u);
  EXPECT_EQ(b.counters().cq_doorbell_violations, 1u);  // one per stall
  b.cq_doorbell();                                     // arm = 0 counts as well
  EXPECT_EQ(b.drain(), kWaiting);
  EXPECT_EQ(b.counters().wqes, kLimit + kWaiting);
  // The index of that doorbell is where the next 8 wraps start.
  EXPECT_EQ(b.send(kLimit - kWaiting), kLimit - kWaiting);
  EXPECT_EQ(b.send(1), 0u);
  EXPECT_EQ(b.counters().cq_doorbell_violations, 2u);
}

TEST(CqDoorbellRule, ErrorFailsTheQueueForGood) {
  TxBench b(Rule::kError);
  EXPECT_EQ(b.send(150), kLimit);
  EXPECT_EQ(b.counters().cq_doorbell_violations, 1u);
  b.cq_doorbell(true);
  EXPECT_EQ(b.drain(), 0u);
  EXPECT_EQ(b.send(10), 0u);
  EXPECT_EQ(b.counters().wqes, kLimit);
  EXPECT_EQ(b.d.wire(0).sent.size(), kLimit);
}

TEST(CqDoorbellRule, ADriverRingingEveryFourWrapsNeverHitsIt) {
  for (Rule rule : {Rule::kStall, Rule::kError}) {
    TxBench b(rule);
    EXPECT_EQ(b.send(1000, 4 * kCqCount), 1000u);  // the kernel's pace
    EXPECT_EQ(b.counters().cq_doorbell_violations, 0u);
  }
}

TEST(CqDoorbellRule, AStalledRqDropsFramesAsWithoutWqesUntilACqDoorbell) {
  Driver d(config_with(Rule::kStall));
  RxSet rx(d, 1, 1, nullptr, 8192, kCqCount);
  ASSERT_EQ(rx.status, 0);
  RxQueue& q = *rx.queues[0];
  rx.post(0, 200, 128);
  rx.doorbell(0);
  unsigned seen = 0;
  for (unsigned i = 0; i < 150; ++i) {
    d.wire(0).incoming.push_back(frame());
    d.dev().poll();
    seen += static_cast<unsigned>(drain_rx(q.cq).size());
  }
  EXPECT_EQ(seen, kLimit);
  EXPECT_EQ(d.dev().port_counters(0).rx_no_wqe_drops, 150u - kLimit);
  EXPECT_EQ(d.dev().rq_counters(q.id).cq_doorbell_violations, 1u);
  d.dev().ring(d.ctx, hw::kCqDoorbellOffset, hw::cq_doorbell(q.cq.id, q.cq.arm_index(), false));
  d.wire(0).incoming.push_back(frame());
  d.dev().poll();
  auto c = drain_rx(q.cq);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeRxOkay);
  EXPECT_EQ(c[0].wqe_offset, kLimit * 32);  // the WQEs of dropped frames were not consumed
}

}  // namespace
}  // namespace mana::emu::test
