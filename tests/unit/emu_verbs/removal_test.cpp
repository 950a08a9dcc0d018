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

}  // namespace
}  // namespace mana::emu::test
