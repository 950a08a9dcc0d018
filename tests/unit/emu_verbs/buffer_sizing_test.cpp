// SPDX-License-Identifier: BSD-3-Clause
// libmana v44's buffer sizing (doc/hardware.md §3.2), checked against the spec's worked values.
#include <gtest/gtest.h>

#include "verbs/buffer_sizing.h"

namespace mana::emu::verbs {
namespace {

TEST(TrapBufferSizing, WqeSizeIsOobsPlusSgesInBasicUnits) {
  EXPECT_EQ(wqe_size(1), 32u);
  EXPECT_EQ(wqe_size(2), 64u);
  EXPECT_EQ(wqe_size(15), 256u);
  EXPECT_EQ(wqe_size(30), 512u);
  EXPECT_EQ(wqe_size(31), 512u);
  EXPECT_EQ(wqe_size(32), 544u);
}

TEST(TrapBufferSizing, DpdkTypicalQueues) {
  EXPECT_EQ(sq_buffer_size(256, 15), 65536u);  // 64 KiB SQ for nb_desc 256
  EXPECT_EQ(rq_buffer_size(256, 1), 8192u);
  EXPECT_EQ(cq_buffer_size(256), 16384u);
}

TEST(TrapBufferSizing, RoundsToPowersOfTwoOfWholePages) {
  EXPECT_EQ(cq_buffer_size(1), 4096u);
  EXPECT_EQ(cq_buffer_size(65), 8192u);
  EXPECT_EQ(cq_buffer_size(200), 16384u);
  EXPECT_EQ(sq_buffer_size(3, 15), 4096u);
  EXPECT_EQ(sq_buffer_size(17, 15), 8192u);
  EXPECT_EQ(rq_buffer_size(192, 1), 8192u);   // 6144 -> 8192
  EXPECT_EQ(rq_buffer_size(160, 2), 16384u);  // 10240 -> 12288 -> 16384
}

TEST(TrapBufferSizing, RdmaCore44Limits) {
  EXPECT_TRUE(libmana_cq_ok(256, 256));
  EXPECT_FALSE(libmana_cq_ok(257, 256));
  EXPECT_TRUE(libmana_sq_ok(256, 30, 256));
  EXPECT_FALSE(libmana_sq_ok(257, 1, 256));
  EXPECT_FALSE(libmana_sq_ok(1, 32, 256));
  EXPECT_TRUE(libmana_rq_ok(256, 15, 256));
  EXPECT_FALSE(libmana_rq_ok(256, 16, 256));
  EXPECT_FALSE(libmana_rq_ok(257, 1, 256));
  // Another limit is taken as given.
  EXPECT_TRUE(libmana_cq_ok(1024, 1024));
  EXPECT_FALSE(libmana_sq_ok(1025, 1, 1024));
}

TEST(TrapBufferSizing, RdmaCore49ChecksNothingInUserSpace) {
  EXPECT_TRUE(libmana_cq_ok(4096, 0));
  EXPECT_TRUE(libmana_sq_ok(4096, 32, 0));
  EXPECT_TRUE(libmana_rq_ok(4096, 16, 0));
}

}  // namespace
}  // namespace mana::emu::verbs
