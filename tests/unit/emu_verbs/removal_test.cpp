// SPDX-License-Identifier: BSD-3-Clause
// Hot removal through the control channel (layout.md): IBV_EVENT_DEVICE_FATAL on the open
// context's async_fd, the device unlisted while removed, listed again after `add`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <cerrno>
#include <string>

#include "scenario.h"
#include "verbs_driver.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace mana::emu::test {
namespace {

bool listed(const std::string& name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  bool found = false;
  for (int i = 0; i < n; ++i) found = found || name == ibv_get_device_name(list[i]);
  ibv_free_device_list(list);
  return found;
}

TEST(TrapRemoval, AsyncFatalEventAndRelisting) {
  ibv_device** list = ibv_get_device_list(nullptr);
  ibv_device* dev = find_device(list, "7870:00:01.0");
  ASSERT_NE(dev, nullptr);
  ibv_context* ctx = ibv_open_device(dev);
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK), 0);
  ibv_async_event event{};
  errno = 0;
  EXPECT_EQ(ibv_get_async_event(ctx, &event), -1);
  EXPECT_EQ(errno, EAGAIN);

  EXPECT_EQ(control("remove 1"), "ok VF 1 removed");
  pollfd pfd{ctx->async_fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 5000), 1) << "async_fd never became readable";
  ASSERT_EQ(ibv_get_async_event(ctx, &event), 0);
  EXPECT_EQ(event.event_type, IBV_EVENT_DEVICE_FATAL);
  ibv_ack_async_event(&event);
  errno = 0;
  EXPECT_EQ(ibv_get_async_event(ctx, &event), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_FALSE(listed("mana_1"));
  EXPECT_TRUE(listed("mana_0"));
  errno = 0;
  EXPECT_EQ(ibv_open_device(dev), nullptr);  // a stale ibv_device of a removed VF
  EXPECT_EQ(errno, ENODEV);

  EXPECT_EQ(control("add 1"), "ok VF 1 added");
  EXPECT_TRUE(listed("mana_1"));
  EXPECT_EQ(ibv_close_device(ctx), 0);
  ibv_free_device_list(list);
  std::string reply;
  EXPECT_TRUE(vf_has_no_live_objects(1, &reply)) << reply;
}

// After a removal uverbs answers every destroy on the disassociated context with EIO before it
// looks at any use count, so DPDK's teardown order (RSS QP, table, WQ, CQ) gets EIO at each step,
// never EBUSY. Without RDMAV_ALLOW_DISASSOC_DESTROY (this test program does not set it) libibverbs
// passes the EIO on and keeps each object: `live` still counts them all.
TEST(TrapRemoval, DestroysAfterRemovalAnswerEioInAnyOrder) {
  ibv_device** list = ibv_get_device_list(nullptr);
  ibv_device* dev = find_device(list, "7870:00:01.0");
  ASSERT_NE(dev, nullptr);
#if defined(__SANITIZE_ADDRESS__)
  // The objects created here stay allocated on purpose (libibverbs keeps them): not a leak to
  // report.
  struct LeaksExpected {
    LeaksExpected() { __lsan_disable(); }
    ~LeaksExpected() { __lsan_enable(); }
  } leaks_expected;
#endif
  PortObjects port;
  ASSERT_TRUE(port.open(dev, 1));
  ASSERT_EQ(port.set_allocators(), 0);
  TxQueue txq;  // first: the raw QP configures the vPort the RSS QP needs
  ASSERT_EQ(txq.create(port, 64), 0);
  RxQueue rxq;
  ASSERT_EQ(rxq.create(port, 64), 0);
  EXPECT_EQ(control("remove 1"), "ok VF 1 removed");
  EXPECT_EQ(ibv_destroy_qp(rxq.rss), EIO);
  EXPECT_EQ(ibv_destroy_rwq_ind_table(rxq.ind), EIO) << "the table's use count was looked at";
  EXPECT_EQ(ibv_destroy_wq(rxq.wq), EIO) << "the WQ's use count was looked at";
  EXPECT_EQ(ibv_destroy_cq(rxq.cq), EIO);
  EXPECT_EQ(ibv_destroy_qp(txq.qp), EIO);
  EXPECT_EQ(ibv_destroy_cq(txq.cq), EIO);
  EXPECT_EQ(control("live 1"),
            R"(ok {"pds":1,"mrs":0,"cqs":2,"wqs":1,"sqs":1,"rss_qps":1,"contexts":1})");
  EXPECT_EQ(control("add 1"), "ok VF 1 added");
  EXPECT_EQ(ibv_close_device(port.ctx), 0);
  ibv_free_device_list(list);
}

}  // namespace
}  // namespace mana::emu::test
