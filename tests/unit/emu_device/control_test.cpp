// SPDX-License-Identifier: BSD-3-Clause
// Control calls: objects, ids, limits and errnos of mana_ib (doc/hardware.md §3.4, §6.1, §6.2).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <set>

#include "driver.h"
#include "mana/toeplitz.h"

namespace mana::emu::test {
namespace {

TEST(DeviceControl, CreatesEveryObjectAndReleasesThemAll) {
  Driver d(test_config(2));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  RxSet rx(d, 1, 4);
  ASSERT_EQ(rx.status, 0);
  LiveObjects l = d.dev().live_objects();
  EXPECT_EQ(l.contexts, 1u);
  EXPECT_EQ(l.pds, 1u);
  EXPECT_EQ(l.mrs, 1u);
  EXPECT_EQ(l.cqs, 5u);
  EXPECT_EQ(l.wqs, 4u);
  EXPECT_EQ(l.sqs, 1u);
  EXPECT_EQ(l.rss_qps, 1u);

  // Queue ids: 24-bit, non-zero, distinct across SQ/RQ/CQ, not the sequence 0, 1, 2, ...
  std::set<uint32_t> ids{tx.binding.sq_id, tx.binding.cq_id};
  for (auto& q : rx.queues) {
    ids.insert(q->id);
    ids.insert(q->cq.id);
  }
  EXPECT_EQ(ids.size(), 10u);
  bool all_small = true;
  for (uint32_t id : ids) {
    EXPECT_NE(id, 0u);
    EXPECT_LE(id, hw::kQueueIdMask);
    all_small = all_small && id < 16;
  }
  EXPECT_FALSE(all_small);
  EXPECT_LE(tx.binding.tx_vp_offset, 255u);

  EXPECT_EQ(d.dev().close_context(d.ctx), EBUSY);
  EXPECT_EQ(d.dev().destroy_qp(rx.qp), 0);
  EXPECT_EQ(d.dev().destroy_qp(tx.qp), 0);
  EXPECT_EQ(d.dev().destroy_qp(tx.qp), EINVAL);
  for (auto& q : rx.queues) {
    EXPECT_EQ(d.dev().destroy_wq(q->wq), 0);
    EXPECT_EQ(d.dev().destroy_cq(q->cq.handle), 0);
  }
  EXPECT_EQ(d.dev().destroy_cq(tx.cq.handle), 0);
  EXPECT_EQ(d.dev().dereg_mr(d.lkey), 0);
  EXPECT_EQ(d.dev().dealloc_pd(d.pd), 0);
  EXPECT_EQ(d.dev().close_context(d.ctx), 0);
  l = d.dev().live_objects();
  EXPECT_EQ(l.contexts + l.pds + l.mrs + l.cqs + l.wqs + l.sqs + l.rss_qps, 0u);
}

TEST(DeviceControl, LkeysAreOpaqueNonZeroAndNeverAllOnes) {
  Driver d(test_config(1));
  std::set<uint32_t> keys{d.lkey};
  std::vector<uint32_t> order{d.lkey};
  for (int i = 0; i < 200; ++i) {
    uint32_t k = 0;
    ASSERT_EQ(d.dev().reg_mr(d.pd, reinterpret_cast<uint64_t>(d.arena()) + i, 64, 0, &k), 0);
    EXPECT_NE(k, 0u);
    EXPECT_NE(k, 0xFFFFFFFFu);
    keys.insert(k);
    order.push_back(k);
  }
  EXPECT_EQ(keys.size(), 201u);
  unsigned sequential = 0;
  for (size_t i = 1; i < order.size(); ++i) sequential += order[i] == order[i - 1] + 1;
  EXPECT_LT(sequential, 10u);
  EXPECT_EQ(d.dev().live_objects().mrs, 201u);
}

TEST(DeviceControl, MrArgumentChecks) {
  Driver d(test_config(1));
  uint32_t k = 0;
  const uint64_t a = reinterpret_cast<uint64_t>(d.arena());
  EXPECT_EQ(d.dev().reg_mr(d.pd, a, 0, kIbvLocalWrite, &k), EINVAL);
  EXPECT_EQ(d.dev().reg_mr(d.pd, a, 64, 8 /* REMOTE_ATOMIC */, &k), EINVAL);
  EXPECT_EQ(d.dev().reg_mr(d.pd, UINT64_MAX - 10, 64, 0, &k), EINVAL);
  EXPECT_EQ(d.dev().reg_mr(d.pd + 1000, a, 64, 0, &k), EINVAL);
  EXPECT_EQ(d.dev().dereg_mr(d.lkey ^ 0x80000000u), EINVAL);
}

TEST(DeviceControl, CqAndWqLimitsFollowTheKernel) {
  Driver d(test_config(1));
  PageBuffer ring(16384);
  uint32_t h = 0;
  EXPECT_EQ(d.dev().create_cq(d.ctx, ring.data(), 0, -1, &h), EINVAL);
  EXPECT_EQ(d.dev().create_cq(d.ctx, ring.data(), 257, -1, &h), EINVAL);
  EXPECT_EQ(d.dev().create_cq(d.ctx, ring.data() + 64, 64, -1, &h), EINVAL);  // not page aligned
  ASSERT_EQ(d.dev().create_cq(d.ctx, ring.data(), 256, -1, &h), 0);
  PageBuffer rq(8192);
  uint32_t wq = 0;
  EXPECT_EQ(d.dev().create_wq(d.ctx, d.pd, rq.data(), 8192, 257, 1, h, &wq), EINVAL);
  EXPECT_EQ(d.dev().create_wq(d.ctx, d.pd, rq.data(), 8192, 256, 16, h, &wq), EINVAL);
  EXPECT_EQ(d.dev().create_wq(d.ctx, d.pd, rq.data(), 6000, 256, 1, h, &wq), EINVAL);
  EXPECT_EQ(d.dev().create_wq(d.ctx, d.pd, rq.data(), 8192, 256, 15, h, &wq), 0);

  VfConfig big = test_config(1);
  big.limits = DeviceLimits::kernel_2025();
  Driver d2(big);
  PageBuffer ring2(2048 * 64);
  EXPECT_EQ(d2.dev().create_cq(d2.ctx, ring2.data(), 2048, -1, &h), 0);
  EXPECT_EQ(d2.dev().create_cq(d2.ctx, ring2.data(), 2049, -1, &h), EINVAL);
}

TEST(DeviceControl, RawQpChecks) {
  Driver d(test_config(2));
  PageBuffer sq(4096), cqm(4096);
  uint32_t cq = 0, qp = 0;
  SqBinding b{};
  ASSERT_EQ(d.dev().create_cq(d.ctx, cqm.data(), 64, -1, &cq), 0);
  auto create = [&](uint32_t port, uint32_t wr, uint32_t sge) {
    return d.dev().create_raw_qp(d.ctx, d.pd, port, sq.data(), 4096, wr, sge, cq, &b, &qp);
  };
  EXPECT_EQ(create(0, 64, 1), EINVAL);
  EXPECT_EQ(create(3, 64, 1), EINVAL);
  EXPECT_EQ(create(1, 257, 1), EINVAL);
  EXPECT_EQ(create(1, 64, 31), EINVAL);
  EXPECT_EQ(create(1, 64, 30), 0);
  // The CQ now completes that SQ.
  EXPECT_EQ(d.dev().destroy_cq(cq), EBUSY);
  EXPECT_EQ(d.dev().dealloc_pd(d.pd), EBUSY);
  EXPECT_EQ(d.dev().destroy_qp(qp), 0);
  EXPECT_EQ(d.dev().destroy_cq(cq), 0);
}

TEST(DeviceControl, RssQpChecks) {
  Driver d(test_config(1));
  std::vector<std::unique_ptr<RxQueue>> qs;
  std::vector<uint32_t> wqs;
  for (int i = 0; i < 128; ++i) {
    qs.push_back(std::make_unique<RxQueue>(d, 4096, 64));
    wqs.push_back(qs.back()->wq);
  }
  std::vector<RqBinding> out(128);
  uint32_t qp = 0;
  auto create = [&](unsigned log, uint8_t fn, uint32_t key_len, uint32_t port = 1) {
    return d.dev().create_rss_qp(d.ctx, d.pd, port, wqs.data(), log, fn, kDefaultRssKey, key_len,
                                 out.data(), &qp);
  };
  EXPECT_EQ(create(7, 1, 40), EINVAL);  // 128 entries > 64
  EXPECT_EQ(create(2, 2, 40), EINVAL);  // not Toeplitz
  EXPECT_EQ(create(2, 1, 39), EINVAL);
  EXPECT_EQ(create(2, 1, 40, 2), EINVAL);
  ASSERT_EQ(create(6, 1, 40), 0);
  const uint32_t first = qp;
  EXPECT_EQ(d.dev().destroy_wq(wqs[0]), EBUSY);
  EXPECT_EQ(d.dev().destroy_cq(qs[0]->cq.handle), EBUSY);
  // One RSS QP per vPort; reusing bound WQs is refused too.
  std::swap(wqs[0], wqs[64]);
  EXPECT_EQ(create(0, 1, 40), EBUSY);
  std::swap(wqs[0], wqs[64]);
  EXPECT_EQ(create(0, 1, 40), EBUSY);
  EXPECT_EQ(d.dev().destroy_qp(first), 0);
  // The first RSS QP took the DMA regions of its WQs with it: they cannot serve another one
  // (doc/hardware.md §2.5); a WQ never bound can.
  EXPECT_EQ(create(0, 1, 40), EINVAL);
  std::swap(wqs[0], wqs[64]);
  EXPECT_EQ(create(0, 1, 40), 0);
}

TEST(DeviceControl, VportBelongsToOnePdAndNotToAnUpNetdev) {
  VfConfig c = test_config(2);
  c.ports[0].netdev_up = true;
  Driver d(c);
  TxQueue up(d, 1);
  EXPECT_EQ(up.status, ENODEV);
  RxSet rx_up(d, 1, 1);
  EXPECT_EQ(rx_up.status, ENODEV);
  d.dev().set_netdev_up(0, false);
  TxQueue a(d, 1);
  EXPECT_EQ(a.status, 0);
  TxQueue b(d, 1);  // same PD: shares the vPort
  EXPECT_EQ(b.status, 0);

  uint32_t pd2 = 0, cq = 0, qp = 0;
  ASSERT_EQ(d.dev().alloc_pd(d.ctx, &pd2), 0);
  PageBuffer sq(4096), cqm(4096);
  ASSERT_EQ(d.dev().create_cq(d.ctx, cqm.data(), 64, -1, &cq), 0);
  SqBinding bind{};
  auto other_pd = [&](uint32_t port) {
    return d.dev().create_raw_qp(d.ctx, pd2, port, sq.data(), 4096, 64, 1, cq, &bind, &qp);
  };
  EXPECT_EQ(other_pd(1), ENODEV);
  EXPECT_EQ(d.dev().destroy_qp(a.qp), 0);
  EXPECT_EQ(other_pd(1), ENODEV);  // b still holds the vPort
  EXPECT_EQ(d.dev().destroy_qp(b.qp), 0);
  EXPECT_EQ(other_pd(1), 0);  // released by the last QP
  EXPECT_EQ(d.dev().destroy_qp(qp), 0);
  EXPECT_EQ(other_pd(2), 0);  // another port is independent
}

// Creates on the old context fail with EIO while the VF is away, a new context cannot be opened;
// destroys of the old objects free them and answer EIO, as
// uverbs does after disassociating the context (doc/hardware.md §2.7), in any order.
TEST(DeviceControl, HotRemovalFailsCreatesAndDestroysFree) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  d.dev().set_present(false);
  EXPECT_FALSE(d.dev().present());
  uint32_t x = 0;
  PageBuffer buf(4096);
  SqBinding b{};
  RqBinding rb{};
  EXPECT_EQ(d.dev().open_context(reinterpret_cast<volatile uint64_t*>(buf.data()), &x),
            ENODEV);  // no new context
  EXPECT_EQ(d.dev().alloc_pd(d.ctx, &x), EIO);
  EXPECT_EQ(d.dev().reg_mr(d.pd, reinterpret_cast<uint64_t>(d.arena()), 64, 0, &x), EIO);
  EXPECT_EQ(d.dev().create_cq(d.ctx, buf.data(), 64, -1, &x), EIO);
  EXPECT_EQ(d.dev().create_wq(d.ctx, d.pd, buf.data(), 4096, 64, 1, tx.cq.handle, &x), EIO);
  EXPECT_EQ(d.dev().create_raw_qp(d.ctx, d.pd, 1, buf.data(), 4096, 64, 1, tx.cq.handle, &b, &x),
            EIO);
  EXPECT_EQ(d.dev().create_rss_qp(d.ctx, d.pd, 1, &x, 0, 1, kDefaultRssKey, 40, &rb, &x), EIO);
  EXPECT_EQ(d.dev().dealloc_pd(d.pd), EIO);  // before its MR and QP: the kernel freed all
  EXPECT_EQ(d.dev().destroy_cq(tx.cq.handle), EIO);
  EXPECT_EQ(d.dev().dereg_mr(d.lkey), EIO);
  EXPECT_EQ(d.dev().destroy_qp(tx.qp), EIO);
  EXPECT_EQ(d.dev().close_context(d.ctx), 0);
  const LiveObjects l = d.dev().live_objects();
  EXPECT_EQ(l.contexts + l.pds + l.mrs + l.cqs + l.sqs, 0u);
  d.dev().set_present(true);
  EXPECT_EQ(d.dev().destroy_qp(tx.qp), EINVAL);  // gone
}

// Without RDMAV_ALLOW_DISASSOC_DESTROY libibverbs keeps its memory after the EIO: the objects stay
// counted, which is how `live` shows the leak.
TEST(DeviceControl, DisassociatedDestroyWithoutTheVariableLeaks) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  d.dev().set_disassociate_destroy(false);
  d.dev().set_present(false);
  EXPECT_EQ(d.dev().destroy_qp(tx.qp), EIO);
  EXPECT_EQ(d.dev().destroy_cq(tx.cq.handle), EIO);
  EXPECT_EQ(d.dev().dereg_mr(d.lkey), EIO);
  EXPECT_EQ(d.dev().dealloc_pd(d.pd), EIO);
  EXPECT_EQ(d.dev().close_context(d.ctx), 0);
  const LiveObjects l = d.dev().live_objects();
  EXPECT_EQ(l.pds + l.mrs + l.cqs + l.sqs, 4u);
  EXPECT_EQ(l.contexts, 0u);
}

// Objects the driver never destroyed stay listed (a user-space leak, visible in `live`) but hold
// no hardware: after re-add a new context takes the vPort; the old context creates nothing.
TEST(DeviceControl, ReAddedVfStartsWithAFreeVport) {
  Driver d(test_config(1));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  const uint32_t old_ctx = d.ctx, old_pd = d.pd;
  d.dev().set_present(false);
  d.dev().set_present(true);
  EXPECT_EQ(d.dev().live_objects().sqs, 1u);
  uint32_t x = 0;
  EXPECT_EQ(d.dev().alloc_pd(old_ctx, &x), EIO);
  d.reopen();
  TxQueue fresh(d, 1);
  EXPECT_EQ(fresh.status, 0);
  uint32_t other_pd = 0;
  ASSERT_EQ(d.dev().alloc_pd(d.ctx, &other_pd), 0);
  EXPECT_NE(old_pd, other_pd);
}

TEST(DeviceControl, PolledDoorbellsAllowOneSqAndOneRqPerContext) {
  Driver d(test_config(2));
  d.dev().set_poll_doorbells(true);
  TxQueue first(d, 1);
  EXPECT_EQ(first.status, 0);
  TxQueue second(d, 2);  // would share the SQ slot of the page
  EXPECT_EQ(second.status, EBUSY);
  RxSet two(d, 1, 2);
  EXPECT_EQ(two.status, EBUSY);
  RxSet one(d, 1, 1);
  EXPECT_EQ(one.status, 0);
  // Trap mode has no such limit.
  d.dev().set_poll_doorbells(false);
  TxQueue third(d, 2);
  EXPECT_EQ(third.status, 0);
  // Destroying releases the slot.
  ASSERT_EQ(d.dev().destroy_qp(third.qp), 0);
  ASSERT_EQ(d.dev().destroy_qp(first.qp), 0);
  d.dev().set_poll_doorbells(true);
  TxQueue again(d, 2);
  EXPECT_EQ(again.status, 0);
}

// ibv_close_device unmaps the doorbell page even when the device refuses the close (objects left):
// a polling device must not read it afterwards.
TEST(DeviceControl, AContextClosedWithObjectsLeftIsNoLongerSampled) {
  Driver d(test_config(1));
  d.dev().set_poll_doorbells(true);
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  uint32_t ctx = 0, pd = 0;
  ASSERT_EQ(d.dev().open_context(static_cast<volatile uint64_t*>(page), &ctx), 0);
  ASSERT_EQ(d.dev().alloc_pd(ctx, &pd), 0);
  EXPECT_EQ(d.dev().close_context(ctx), EBUSY);
  munmap(page, 4096);
  d.dev().poll();  // faulted on the unmapped page
  EXPECT_EQ(d.dev().dealloc_pd(pd), 0);
}

}  // namespace
}  // namespace mana::emu::test
