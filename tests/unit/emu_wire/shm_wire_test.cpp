// SPDX-License-Identifier: BSD-3-Clause
// shm:<name> wires: two processes, two ends in one process, a third end, and a link left behind
// by a process that died.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "wire/endpoints.h"
#include "wire/frame_ring.h"
#include "wire_test_util.h"

namespace {

using mana::emu::kShmWireCapacity;
using mana::emu::kWireMaxFrameLen;
using mana::emu::WireEndpoint;
using namespace std::chrono_literals;
using wire_test::frame_seq;
using wire_test::make;
using wire_test::numbered_frame;
using wire_test::wait_until;

// A link name no other test run uses.
std::string unique_link(const char* what) {
  return "unit-" + std::to_string(getpid()) + "-" + what;
}

bool shm_object_exists(const std::string& link) {
  struct stat st {};
  return stat(("/dev/shm/mana-emu-" + link).c_str(), &st) == 0;
}

uint32_t frame_len_for(uint32_t seq) { return 60 + (seq * 37) % 1455; }

// Child side: waits for the parent's "go", sends `count` numbered frames, exits 0 on success.
[[noreturn]] void child_sender(const std::string& spec, uint32_t count) {
  int status = 10;
  {
    std::string error;
    auto wires = make({spec}, &error);
    if (wires) {
      WireEndpoint* ep = wires->endpoint(0);
      std::vector<uint8_t> buf(kWireMaxFrameLen);
      uint32_t go_len = 0;
      status = 11;
      if (wait_until(
              [&] { return (go_len = ep->receive(buf.data(), kWireMaxFrameLen, nullptr)) != 0; },
              10s) &&
          go_len == 4 && frame_seq(buf.data()) == 0x60606060) {
        status = 0;
        for (uint32_t seq = 0; seq < count && status == 0; ++seq) {
          const auto frame = numbered_frame(seq, frame_len_for(seq));
          const uint32_t len = static_cast<uint32_t>(frame.size());
          // A full ring is back-pressure from the parent, not loss: retry until it drains.
          if (!wait_until([&] { return ep->transmit(frame.data(), len); }, 10s)) status = 12;
        }
      }
    }
  }  // the wire closes before we exit
  _exit(status);
}

TEST(ShmWire, TwoProcessesCarryFramesInOrder) {
  const std::string link = unique_link("fork");
  const std::string spec = "shm:" + link;
  std::string error;
  auto wires = make({spec}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* ep = wires->endpoint(0);
  const uint32_t count = 4 * kShmWireCapacity + 17;  // wraps the ring and fills it

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) child_sender(spec, count);

  const uint32_t go = 0x60606060;
  ASSERT_TRUE(ep->transmit(reinterpret_cast<const uint8_t*>(&go), 4));
  std::vector<uint8_t> buf(kWireMaxFrameLen);
  uint32_t next = 0;
  bool in_order = true;
  const bool all = wait_until(
      [&] {
        uint32_t full_len = 0;
        while (const uint32_t len = ep->receive(buf.data(), kWireMaxFrameLen, &full_len)) {
          const auto want = numbered_frame(next, frame_len_for(next));
          if (len != want.size() || full_len != len ||
              !std::equal(want.begin(), want.end(), buf.begin())) {
            in_order = false;
            ADD_FAILURE() << "frame " << next << ": got seq " << frame_seq(buf.data()) << " len "
                          << len;
            return true;
          }
          ++next;
        }
        return next == count;
      },
      20s);
  int status = -1;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_TRUE(all) << "received " << next << " of " << count;
  EXPECT_TRUE(in_order);
  EXPECT_EQ(next, count);
  EXPECT_EQ(ep->peek(), 0u);
  // The child is gone and we are the last end: closing removes the object.
  EXPECT_TRUE(shm_object_exists(link));
  wires.reset();
  EXPECT_FALSE(shm_object_exists(link));
}

TEST(ShmWire, TwoEndsInOneProcessAndNoThird) {
  const std::string spec = "shm:" + unique_link("local");
  std::string error;
  auto a = make({spec}, &error);
  ASSERT_TRUE(a) << error;
  auto b = make({spec}, &error);
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(make({spec}, &error), nullptr);
  EXPECT_NE(error.find("both ends"), std::string::npos) << error;

  WireEndpoint* ea = a->endpoint(0);
  WireEndpoint* eb = b->endpoint(0);
  ASSERT_TRUE(ea->transmit(numbered_frame(1, 100).data(), 100));
  ASSERT_TRUE(eb->transmit(numbered_frame(2, 200).data(), 200));
  std::vector<uint8_t> buf(300);
  uint32_t full_len = 0;
  ASSERT_EQ(eb->receive(buf.data(), 50, &full_len), 50u);  // truncated
  EXPECT_EQ(full_len, 100u);
  EXPECT_EQ(frame_seq(buf.data()), 1u);
  EXPECT_EQ(ea->peek(), 200u);
  ASSERT_EQ(ea->receive(buf.data(), 300, &full_len), 200u);
  EXPECT_EQ(frame_seq(buf.data()), 2u);

  // A side that leaves can be taken again, and frames its peer sent meanwhile wait for it.
  b.reset();
  ASSERT_TRUE(ea->transmit(numbered_frame(3, 64).data(), 64));
  b = make({spec}, &error);
  ASSERT_TRUE(b) << error;
  ASSERT_EQ(b->endpoint(0)->receive(buf.data(), 300, &full_len), 64u);
  EXPECT_EQ(frame_seq(buf.data()), 3u);
}

TEST(ShmWire, LinkLeftByADeadProcessStartsAfresh) {
  const std::string link = unique_link("stale");
  const std::string spec = "shm:" + link;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string error;
    auto wires = make({spec}, &error);
    bool sent = wires && wires->endpoint(0)->transmit(numbered_frame(9, 64).data(), 64);
    wires.release();  // dies without closing the link, like a crash
    _exit(sent ? 0 : 1);
  }
  int status = -1;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(shm_object_exists(link));  // left behind

  std::string error;
  auto a = make({spec}, &error);
  ASSERT_TRUE(a) << error;
  auto b = make({spec}, &error);  // both sides are free again: the dead one's lock went with it
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(a->endpoint(0)->peek(), 0u);
  EXPECT_EQ(b->endpoint(0)->peek(), 0u) << "a frame from the dead process survived the reset";
  a.reset();
  b.reset();
  EXPECT_FALSE(shm_object_exists(link));
}

}  // namespace
