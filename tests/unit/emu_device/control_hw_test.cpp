// SPDX-License-Identifier: BSD-3-Clause
// Control-path behaviours that differ between kernels (VfConfig::hw; doc/emulator.md, "Open
// behaviours: control path"): raw-qp-first, vport-busy and cq-eq.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "driver.h"
#include "frames.h"

namespace mana::emu::test {
namespace {

VfConfig config_with(void (*set)(HwBehaviour&)) {
  VfConfig c = test_config(2);
  set(c.hw);
  return c;
}

// A raw QP of a second PD on `port`: whether the vPort is free for another owner.
struct OtherPd {
  explicit OtherPd(Driver& d) : d_(d) {
    EXPECT_EQ(d.dev().alloc_pd(d.ctx, &pd), 0);
    EXPECT_EQ(d.dev().create_cq(d.ctx, cq_ring.data(), 64, -1, &cq), 0);
  }
  int raw_qp(uint32_t port) {
    SqBinding b{};
    return d_.dev().create_raw_qp(d_.ctx, pd, port, sq.data(), 4096, 64, 1, cq, &b, &qp);
  }
  Driver& d_;
  uint32_t pd = 0, cq = 0, qp = 0;
  PageBuffer sq{4096}, cq_ring{4096};
};

TEST(RawQpFirst, OnAnRssQpNeedsARawQpOfItsPdOnItsPortAndClaimsNothingWithout) {
  Driver d(config_with([](HwBehaviour& hw) { hw.raw_qp_first = true; }));
  RxSet alone(d, 1, 1);
  EXPECT_EQ(alone.status, EINVAL);
  OtherPd other(d);
  ASSERT_EQ(other.raw_qp(1), 0) << "the refused RSS QP claimed the vPort";
  // The vPort now belongs to the other PD: configured, but not for ours.
  RxSet foreign(d, 1, 1);
  EXPECT_EQ(foreign.status, EINVAL);
  ASSERT_EQ(d.dev().destroy_qp(other.qp), 0);
  // A raw QP on another port configures that port only.
  TxQueue port2(d, 2);
  ASSERT_EQ(port2.status, 0);
  RxSet wrong_port(d, 1, 1);
  EXPECT_EQ(wrong_port.status, EINVAL);
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  RxSet rx(d, 1, 2);
  ASSERT_EQ(rx.status, 0);
  // The RSS QP holds a reference of its own: the vPort stays ours after the raw QP goes.
  ASSERT_EQ(d.dev().destroy_qp(tx.qp), 0);
  EXPECT_EQ(other.raw_qp(1), ENODEV);
  ASSERT_EQ(d.dev().destroy_qp(rx.qp), 0);
  EXPECT_EQ(other.raw_qp(1), 0);
}

TEST(RawQpFirst, OffAnRssQpAloneConfiguresAndClaimsTheVport) {
  Driver d(config_with([](HwBehaviour& hw) { hw.raw_qp_first = false; }));
  RxSet alone(d, 1, 1);
  ASSERT_EQ(alone.status, 0);
  OtherPd other(d);
  EXPECT_EQ(other.raw_qp(1), ENODEV);
  ASSERT_EQ(d.dev().destroy_qp(alone.qp), 0);
  EXPECT_EQ(other.raw_qp(1), 0);
}

TEST(VportBusy, EbusyAnswersAnUpNetdevAndAnotherPd) {
  VfConfig c = config_with([](HwBehaviour& hw) { hw.vport_busy_errno = EBUSY; });
  c.ports[1].netdev_up = true;
  Driver d(c);
  TxQueue up(d, 2);
  EXPECT_EQ(up.status, EBUSY);
  TxQueue mine(d, 1);
  ASSERT_EQ(mine.status, 0);
  OtherPd other(d);
  EXPECT_EQ(other.raw_qp(1), EBUSY);
}

TEST(VportBusy, EnodevByDefault) {
  VfConfig c = test_config(2);
  c.ports[1].netdev_up = true;
  Driver d(c);
  TxQueue up(d, 2);
  EXPECT_EQ(up.status, ENODEV);
  TxQueue mine(d, 1);
  ASSERT_EQ(mine.status, 0);
  OtherPd other(d);
  EXPECT_EQ(other.raw_qp(1), ENODEV);
}

// Events pending on a non-blocking eventfd (0 when none).
uint64_t take_events(int fd) {
  uint64_t v = 0;
  return ::read(fd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

// An armed TX CQ and an armed RX CQ each complete one frame on a loop port; the events their
// completion channel got.
uint64_t events_of_armed_cqs(bool cq_eq) {
  VfConfig c = test_config(1);
  c.ports[0].wire = "loop";
  c.hw.cq_eq = cq_eq;
  const int efd = eventfd(0, EFD_NONBLOCK);
  EXPECT_GE(efd, 0);
  Driver d(c, 4 << 20, /*real_wires=*/true);
  TxQueue tx(d, 1, 4096, 64, efd);
  RxSet rx(d, 1, 1, nullptr, 4096, 64, efd);
  EXPECT_EQ(tx.status, 0);
  EXPECT_EQ(rx.status, 0);
  rx.post(0, 4);
  rx.doorbell(0);
  for (CqRing* cq : {&tx.cq, &rx.queues[0]->cq}) {
    d.dev().ring(d.ctx, hw::kCqDoorbellOffset, hw::cq_doorbell(cq->id, cq->arm_index(), true));
  }
  FlowSpec f;
  f.src_mac = f.dst_mac = port_mac(0);
  tx.post_frame(build_frame(f));
  tx.doorbell();
  const bool both = d.poll_until([&] {
    return d.dev().sq_counters(tx.binding.sq_id).cqes == 1 &&
           d.dev().rq_counters(rx.queues[0]->id).cqes == 1;
  });
  EXPECT_TRUE(both) << "the frame did not complete on both CQs within 64 device passes";
  const uint64_t events = take_events(efd);
  ::close(efd);
  return events;
}

TEST(CqEq, OnArmedCqsSignalTheirChannel) { EXPECT_EQ(events_of_armed_cqs(true), 2u); }

TEST(CqEq, OffArmedCqsNeverSignal) { EXPECT_EQ(events_of_armed_cqs(false), 0u); }

}  // namespace
}  // namespace mana::emu::test
