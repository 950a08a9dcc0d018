// SPDX-License-Identifier: BSD-3-Clause
// The TX stall watchdog's verdict on one queue (tx_watchdog.h): stalled only when work is
// outstanding, the tail has not moved for the timeout, and the application found the ring full
// since the last look.
#include <gtest/gtest.h>

#include "tx_watchdog.h"

namespace {

constexpr uint64_t kTimeout = 100;

TEST(TxStallSeen, AStuckTailWithTheRingFullIsAStallAfterTheTimeout) {
  mana::TxStallWatch w{5, 0, 0};
  uint64_t full = 0;
  EXPECT_FALSE(mana::tx_stall_seen(w, 9, 5, ++full, 50, kTimeout));
  EXPECT_FALSE(mana::tx_stall_seen(w, 9, 5, ++full, 99, kTimeout));
  EXPECT_TRUE(mana::tx_stall_seen(w, 9, 5, ++full, 100, kTimeout));
}

TEST(TxStallSeen, AMovingTailRestartsTheClock) {
  mana::TxStallWatch w{5, 0, 0};
  uint64_t full = 0;
  EXPECT_FALSE(mana::tx_stall_seen(w, 9, 6, ++full, 90, kTimeout));
  EXPECT_FALSE(mana::tx_stall_seen(w, 9, 6, ++full, 150, kTimeout));
  EXPECT_TRUE(mana::tx_stall_seen(w, 9, 6, ++full, 190, kTimeout));
}

TEST(TxStallSeen, AnIdleOrEmptyQueueIsNoStall) {
  mana::TxStallWatch w{5, 0, 0};
  // Work outstanding but no burst found the ring full since the last look: nobody is waiting.
  EXPECT_FALSE(mana::tx_stall_seen(w, 9, 5, 0, 500, kTimeout));
  EXPECT_FALSE(mana::tx_stall_seen(w, 9, 5, 0, 1000, kTimeout));
  // Nothing outstanding (head == tail): whatever the counters, and the clock restarts.
  EXPECT_FALSE(mana::tx_stall_seen(w, 5, 5, 1, 2000, kTimeout));
  EXPECT_FALSE(mana::tx_stall_seen(w, 9, 5, 2, 2050, kTimeout));
  EXPECT_TRUE(mana::tx_stall_seen(w, 9, 5, 3, 2100, kTimeout));
}

TEST(TxStallSeen, PositionsWrapAround) {
  mana::TxStallWatch w{0xfffffffeu, 0, 0};
  EXPECT_FALSE(mana::tx_stall_seen(w, 3, 0xfffffffeu, 1, 10, kTimeout));
  EXPECT_TRUE(mana::tx_stall_seen(w, 3, 0xfffffffeu, 2, 110, kTimeout));
}

}  // namespace
