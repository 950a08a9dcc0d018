// SPDX-License-Identifier: BSD-3-Clause
// Polled doorbells with several queues per slot, as lockstep runs them (doc/emulator.md
// "Lockstep"): while a context's page is held its stores arrive through `ring` (the verbs layer
// traps them) and the stale page is not sampled; at release each slot takes the last value rung
// into it and sampling goes on from there.
#include <gtest/gtest.h>

#include "driver.h"
#include "frames.h"

namespace mana::emu::test {
namespace {

std::vector<uint8_t> frame() {
  FlowSpec f;
  f.src = {10, 0, 0, 1};
  f.dst = {10, 0, 0, 2};
  f.sport = 1000;
  f.dport = 2000;
  f.payload = 18;
  f.src_mac = port_mac(0);
  f.dst_mac = port_mac(0);
  return build_frame(f);
}

volatile uint64_t& sq_slot(Driver& d) {
  return reinterpret_cast<volatile uint64_t*>(d.page.data())[hw::kSqDoorbellOffset / 8];
}

TEST(HeldDoorbells, SharedSlotsAdmitSeveralQueuesPerContext) {
  Driver d(test_config(1));
  d.dev().set_poll_doorbells(true);
  d.dev().set_shared_doorbell_slots(true);
  TxQueue a(d, 1), b(d, 1), c(d, 1);
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(b.status, 0);
  EXPECT_EQ(c.status, 0);
}

TEST(HeldDoorbells, AHeldPageTakesEveryQueuesDoorbellThenIsSampledFromTheLast) {
  Driver d(test_config(1));
  d.dev().set_poll_doorbells(true);
  d.dev().set_shared_doorbell_slots(true);
  TxQueue a(d, 1), b(d, 1);
  ASSERT_EQ(a.status, 0);
  ASSERT_EQ(b.status, 0);
  d.dev().hold_doorbell_page(d.ctx);
  // Both queues ring one after the other, as a port start does: through the trap, both arrive.
  a.post_frame(frame());
  b.post_frame(frame());
  const uint64_t a_db = hw::sq_doorbell(a.binding.sq_id, a.head_bu * hw::kBasicUnit);
  const uint64_t b_db = hw::sq_doorbell(b.binding.sq_id, b.head_bu * hw::kBasicUnit);
  d.dev().ring(d.ctx, hw::kSqDoorbellOffset, a_db);
  d.dev().ring(d.ctx, hw::kSqDoorbellOffset, b_db);
  // The page itself is stale while held (the trapped stores never reach it): not sampled.
  sq_slot(d) = hw::sq_doorbell(a.binding.sq_id, 0x100 * hw::kBasicUnit);
  d.dev().poll();
  EXPECT_EQ(d.wire(0).sent.size(), 2u);
  EXPECT_EQ(d.dev().sq_counters(a.binding.sq_id).doorbells, 1u);
  EXPECT_EQ(d.dev().sq_counters(b.binding.sq_id).doorbells, 1u);
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
  d.dev().release_doorbell_page(d.ctx);
  EXPECT_EQ(sq_slot(d), b_db);  // what the stores would have left there
  d.dev().poll();               // an unchanged slot is no doorbell
  EXPECT_EQ(d.dev().sq_counters(b.binding.sq_id).doorbells, 1u);
  // Sampled again: one queue's burst, a poll, the other queue's burst, a poll.
  a.post_frame(frame());
  sq_slot(d) = hw::sq_doorbell(a.binding.sq_id, a.head_bu * hw::kBasicUnit);
  d.dev().poll();
  b.post_frame(frame());
  sq_slot(d) = hw::sq_doorbell(b.binding.sq_id, b.head_bu * hw::kBasicUnit);
  d.dev().poll();
  EXPECT_EQ(d.wire(0).sent.size(), 4u);
  EXPECT_EQ(d.dev().sq_counters(a.binding.sq_id).doorbells, 2u);
  EXPECT_EQ(d.dev().sq_counters(b.binding.sq_id).doorbells, 2u);
  EXPECT_EQ(d.dev().bad_doorbells(), 0u);
}

TEST(HeldDoorbells, StoresBeforeTheHoldAreSampledFirst) {
  Driver d(test_config(1));
  d.dev().set_poll_doorbells(true);
  d.dev().set_shared_doorbell_slots(true);
  TxQueue a(d, 1), b(d, 1);
  a.post_frame(frame());
  sq_slot(d) = hw::sq_doorbell(a.binding.sq_id, a.head_bu * hw::kBasicUnit);
  d.dev().hold_doorbell_page(d.ctx);  // the last plain store is taken before trapping starts
  b.post_frame(frame());
  d.dev().ring(d.ctx, hw::kSqDoorbellOffset,
               hw::sq_doorbell(b.binding.sq_id, b.head_bu * hw::kBasicUnit));
  d.dev().poll();
  EXPECT_EQ(d.wire(0).sent.size(), 2u);
  d.dev().release_doorbell_page(d.ctx);
}

}  // namespace
}  // namespace mana::emu::test
