// SPDX-License-Identifier: BSD-3-Clause
// hw rx-steering-on-destroy (doc/hardware.md §9.22): what frames that arrive after an RSS QP is
// destroyed become, on kernels with the fix (clear) and without it (keep), and what the next RSS
// QP on the vPort gets.
#include <gtest/gtest.h>

#include "driver.h"
#include "frames.h"
#include "rx_common.h"

namespace mana::emu::test {
namespace {

VfConfig config(bool keep) {
  VfConfig c = test_config(1);
  c.hw.rx_steering_keep = keep;
  return c;
}

std::vector<uint8_t> frame_to_port(uint32_t sport) {
  FlowSpec f = ip_flow(17, false, {0x02, 0, 0, 0, 0, 0x99}, port_mac(0));
  f.sport = static_cast<uint16_t>(sport);
  return build_frame(f);
}

void arrive(Driver& d, unsigned frames) {
  for (unsigned i = 0; i < frames; ++i) d.wire(0).incoming.push_back(frame_to_port(1000 + i));
  d.dev().poll();
}

// A process's port: its TX queue and a one-queue RSS QP with posted buffers.
struct Process {
  explicit Process(Driver& d) : tx(d, 1), rx(d, 1, 1) {
    rx.post(0, 16);
    rx.doorbell(0);
  }
  TxQueue tx;
  RxSet rx;
};

// A first process sets up its queues and exits, as the verbs core tears them down (RSS QP first).
// `stale` (if given) receives the CQ and RQ ids the steering it leaves behind names.
struct StaleIds {
  uint32_t cq = 0, rq = 0;
};
void first_process_exits(Driver& d, StaleIds* stale = nullptr) {
  Process first(d);
  ASSERT_EQ(first.rx.status, 0);
  if (stale != nullptr) *stale = {first.rx.queues[0]->cq.id, first.rx.queues[0]->id};
  ASSERT_EQ(d.dev().destroy_qp(first.rx.qp), 0);
  ASSERT_EQ(d.dev().destroy_qp(first.tx.qp), 0);
}

TEST(SteeringTeardown, ClearDropsLateFramesAsUnsteeredAndTheNextProcessReceives) {
  Driver d(config(false));
  ASSERT_NO_FATAL_FAILURE(first_process_exits(d));
  arrive(d, 5);
  EXPECT_EQ(d.dev().port_counters(0).rx_no_wqe_drops, 5u);
  EXPECT_EQ(d.dev().port_counters(0).rx_stale_steering_drops, 0u);
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  arrive(d, 3);  // a raw QP but no RSS QP yet: no steering
  EXPECT_EQ(tx.cq.next(), nullptr);
  RxSet rx(d, 1, 1);
  ASSERT_EQ(rx.status, 0);
  rx.post(0, 4);
  rx.doorbell(0);
  arrive(d, 2);
  EXPECT_EQ(drain_rx(rx.queues[0]->cq).size(), 2u);
  EXPECT_EQ(d.dev().port_counters(0).rx_no_wqe_drops, 8u);
}

// Without the fix the steering still names the destroyed queues: frames are lost to it until the
// next RSS QP programs steering, and a TX CQ that reuses a stale CQ id gets RX completions for a
// queue it does not serve (the kernel's report: RX completions on the Ethernet driver's TX CQs).
TEST(SteeringTeardown, KeepLosesLateFramesAndCompletesThemOnACqThatReusesAStaleId) {
  Driver d(config(true));
  StaleIds stale;
  ASSERT_NO_FATAL_FAILURE(first_process_exits(d, &stale));
  arrive(d, 5);
  EXPECT_EQ(d.dev().port_counters(0).rx_stale_steering_drops, 5u);
  EXPECT_EQ(d.dev().port_counters(0).rx_no_wqe_drops, 0u);
  // The next process: its TX CQ takes the stale id, and frames before its RSS QP land there.
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  EXPECT_EQ(tx.binding.cq_id, stale.cq);
  arrive(d, 3);
  const std::vector<RxCompletion> foreign = drain_rx(tx.cq);
  ASSERT_EQ(foreign.size(), 3u);
  for (const RxCompletion& c : foreign) {
    EXPECT_EQ(c.type, hw::kCqeRxOkay);
    EXPECT_EQ(c.is_sq, 0u);
    EXPECT_EQ(c.wq, stale.rq);  // names the destroyed RQ, not the SQ
  }
  EXPECT_EQ(d.dev().port_counters(0).rx_stale_steering_cqes, 3u);
  // Its RSS QP programs steering again: frames reach its queues, none go astray any more.
  RxSet rx(d, 1, 1);
  ASSERT_EQ(rx.status, 0);
  rx.post(0, 4);
  rx.doorbell(0);
  arrive(d, 2);
  EXPECT_EQ(drain_rx(rx.queues[0]->cq).size(), 2u);
  EXPECT_EQ(tx.cq.next(), nullptr);
  EXPECT_EQ(d.dev().port_counters(0).rx_stale_steering_cqes, 3u);
  EXPECT_EQ(d.dev().port_counters(0).rx_stale_steering_drops, 5u);
}

TEST(SteeringTeardown, KeepEndsWhenTheKernelNetdevComesUp) {
  Driver d(config(true));
  ASSERT_NO_FATAL_FAILURE(first_process_exits(d));
  arrive(d, 2);
  EXPECT_EQ(d.dev().port_counters(0).rx_stale_steering_drops, 2u);
  d.dev().set_netdev_up(0, true);  // mana_open programs the kernel's own steering
  arrive(d, 2);
  EXPECT_EQ(d.dev().port_counters(0).rx_stale_steering_drops, 2u);
}

}  // namespace
}  // namespace mana::emu::test
