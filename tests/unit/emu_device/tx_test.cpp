// SPDX-License-Identifier: BSD-3-Clause
// TX data path: WQE parsing across ring and CQ wraps, the checks of doc/hardware.md §6.4 and their
// error CQEs, CQE suppression (doc/hardware.md §4.9), checksum and VLAN offloads (doc/hardware.md
// §4.10), doorbell handling.
#include <gtest/gtest.h>

#include <cstring>

#include "driver.h"
#include "frames.h"
#include "mana/inet_checksum.h"

namespace mana::emu::test {
namespace {

FlowSpec udp_flow(unsigned port_from, unsigned port_to, uint32_t payload = 18) {
  FlowSpec f;
  f.src = {10, 0, 0, 1};
  f.dst = {10, 0, 0, 2};
  f.sport = 1000;
  f.dport = 2000;
  f.payload = payload;
  f.src_mac = port_mac(port_from);
  f.dst_mac = port_mac(port_to);
  return f;
}

struct Completion {
  uint32_t type, vendor_err, wq, is_sq, wqe_offset;
};

std::vector<Completion> drain(CqRing& cq) {
  std::vector<Completion> out;
  while (const hw::Cqe* c = cq.next()) {
    out.push_back({c->type(), hw::Cqe::VendorErr::get(c->dw[0]),
                   hw::Cqe::WqNum::get(c->dw[hw::Cqe::kOwnerDword]),
                   hw::Cqe::IsSq::get(c->dw[hw::Cqe::kOwnerDword]),
                   hw::Cqe::TxWqeOffset::get(c->dw[hw::Cqe::kTxWqeOffsetDword])});
    EXPECT_EQ(hw::Cqe::ClientType::get(c->dw[0]), hw::kClientTypeCompletion);
  }
  return out;
}

class TxTest : public ::testing::Test {
 protected:
  Driver d{test_config(1)};
  TxQueue tx{d, 1};
  TestWire& wire() { return d.wire(0); }
  // Sends what was posted and returns its completions.
  std::vector<Completion> run() {
    tx.doorbell();
    d.dev().poll();
    return drain(tx.cq);
  }
  Completion one_error(uint32_t expected_type) {
    auto c = run();
    EXPECT_EQ(c.size(), 1u);
    if (c.empty()) return {};
    EXPECT_EQ(c[0].type, expected_type);
    EXPECT_TRUE(wire().sent.empty());
    return c[0];
  }
};

TEST_F(TxTest, FramesAndCompletionsAcrossManyRingAndCqWraps) {
  ASSERT_EQ(tx.status, 0);
  // 64-entry CQ, 128-BU SQ: 9 CQ wraps (owner bits wrap at 8); 3-SGE WQEs (2 BUs) make the SGL
  // straddle the end of the ring whenever a WQE starts on its last BU.
  const unsigned total = 64 * 9 + 13;
  unsigned sent = 0, completed = 0;
  uint32_t expected_offset = 0;
  while (completed < total) {
    const unsigned burst = 1 + sent % 7;
    for (unsigned i = 0; i < burst && sent < total; ++i, ++sent) {
      d.reset_arena();
      auto frame = build_frame(udp_flow(0, 0, 10 + sent % 50));
      frame[frame.size() - 1] = static_cast<uint8_t>(sent);
      const unsigned segs = 1 + sent % 3;
      tx.post_frame(frame, {}, segs);
      tx.doorbell();
      d.dev().poll();
      ASSERT_EQ(wire().sent.size(), 1u);
      EXPECT_EQ(wire().sent[0], frame);
      wire().sent.clear();
    }
    for (const Completion& c : drain(tx.cq)) {
      EXPECT_EQ(c.type, hw::kCqeTxOkay);
      EXPECT_EQ(c.wq, tx.binding.sq_id);
      EXPECT_EQ(c.is_sq, 1u);
      EXPECT_EQ(c.wqe_offset, expected_offset);
      const unsigned segs = 1 + completed % 3;
      expected_offset += hw::wqe_size_bu(8, segs);
      ++completed;
    }
    ASSERT_EQ(completed, sent) << "every WQE completes in the same poll";
  }
  QueueCounters q = d.dev().sq_counters(tx.binding.sq_id);
  EXPECT_EQ(q.wqes, total);
  EXPECT_EQ(q.packets, total);
  EXPECT_EQ(q.cqes, total);
  EXPECT_EQ(q.error_cqes, 0u);
  EXPECT_EQ(d.dev().port_counters(0).tx_frames, total);
}

// fault tx stall: the SQ consumes and completes nothing from then on; a new SQ works.
TEST_F(TxTest, AStalledSqCompletesNothingAndANewOneWorks) {
  tx.post_frame(build_frame(udp_flow(0, 0)));
  ASSERT_EQ(run().size(), 1u);
  d.dev().inject({Fault::Kind::kStall, true, 0});
  for (int i = 0; i < 3; ++i) tx.post_frame(build_frame(udp_flow(0, 0)));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(run().empty());
  EXPECT_EQ(d.dev().sq_counters(tx.binding.sq_id).wqes, 1u);
  EXPECT_EQ(wire().sent.size(), 1u);
  TxQueue fresh{d, 1};
  ASSERT_EQ(fresh.status, 0);
  fresh.post_frame(build_frame(udp_flow(0, 0)));
  fresh.doorbell();
  d.dev().poll();
  EXPECT_EQ(drain(fresh.cq).size(), 1u);
  EXPECT_EQ(wire().sent.size(), 2u);
}

TEST_F(TxTest, SuppressedSuccessesWriteNoCqeButFailuresDo) {
  TxOptions quiet;
  quiet.suppress = true;
  for (int i = 0; i < 5; ++i) tx.post_frame(build_frame(udp_flow(0, 0)), quiet);
  tx.post_frame(build_frame(udp_flow(0, 0)));
  auto c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxOkay);
  EXPECT_EQ(c[0].wqe_offset, 5u);
  EXPECT_EQ(wire().sent.size(), 6u);

  // A suppressed WQE with a bad lkey still reports its error.
  hw::TxOob o = tx.oob(quiet);
  uint8_t* buf = d.alloc(64);
  tx.post(o, 8, {{reinterpret_cast<uint64_t>(buf), d.lkey ^ 1, 64}});
  c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxInvalidOob);
  EXPECT_EQ(c[0].vendor_err, hw::kVendorErrAddrRange);
}

TEST_F(TxTest, OobChecks) {
  const std::vector<uint8_t> frame = build_frame(udp_flow(0, 0));
  uint8_t* buf = d.alloc(static_cast<uint32_t>(frame.size()));
  std::memcpy(buf, frame.data(), frame.size());
  const std::vector<hw::Sge> sgl{
      {reinterpret_cast<uint64_t>(buf), d.lkey, static_cast<uint32_t>(frame.size())}};
  using S = hw::TxShortOob;
  hw::TxOob good = tx.oob({});

  tx.post(good, 16, sgl);  // neither 8 nor 24 bytes
  one_error(hw::kCqeTxInvalidOob);
  hw::TxOob o = good;
  o.s.dw0 = S::Format::set(o.s.dw0, 1);  // long format in an 8-byte OOB
  tx.post(o, 8, sgl);
  one_error(hw::kCqeTxInvalidOob);
  tx.post(good, 24, sgl);  // short format in a 24-byte OOB
  one_error(hw::kCqeTxInvalidOob);
  o = good;
  o.s.dw0 = S::VcqNumber::set(o.s.dw0, tx.binding.cq_id ^ 0x10);
  tx.post(o, 8, sgl);
  one_error(hw::kCqeTxInvalidOob);
  o = good;
  o.s.dw1 = S::VsqFrame::set(o.s.dw1, hw::vsq_frame_of(tx.binding.sq_id) ^ 1);
  tx.post(o, 8, sgl);
  one_error(hw::kCqeTxInvalidOob);
  o = good;
  o.s.dw1 = S::VportOffset::set(o.s.dw1, tx.binding.tx_vp_offset + 1);
  tx.post(o, 8, sgl);
  one_error(hw::kCqeTxVportIdxOutOfRange);
  std::vector<hw::Sge> many(31, sgl[0]);
  tx.post(good, 8, many);
  one_error(hw::kCqeTxInvalidOob);

  tx.post(good, 8, sgl);  // and the queue still works
  auto c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxOkay);
  QueueCounters q = d.dev().sq_counters(tx.binding.sq_id);
  EXPECT_EQ(q.error_cqes, 7u);
  EXPECT_EQ(q.cqes, 8u);
  EXPECT_EQ(q.wqes, 8u);
  EXPECT_EQ(q.packets, 1u);
}

TEST_F(TxTest, SglChecksNeverTouchMemoryOutsideALiveMr) {
  const hw::TxOob good = tx.oob({});
  uint8_t* buf = d.alloc(128);
  const uint64_t a = reinterpret_cast<uint64_t>(buf);
  const uint64_t arena_end = reinterpret_cast<uint64_t>(d.arena()) + d.arena_size();
  auto expect_range_error = [&](const std::vector<hw::Sge>& sgl) {
    tx.post(good, 8, sgl);
    EXPECT_EQ(one_error(hw::kCqeTxInvalidOob).vendor_err, hw::kVendorErrAddrRange);
  };
  expect_range_error({{a, d.lkey + 1, 64}});                            // unknown lkey
  expect_range_error({{arena_end - 32, d.lkey, 64}});                   // runs past the MR
  expect_range_error({{a - 4096 * 16, d.lkey, 64}});                    // starts before it
  expect_range_error({{a, d.lkey, 64}, {UINT64_MAX - 8, d.lkey, 16}});  // wraps the address space

  // An MR of another PD.
  uint32_t pd2 = 0, key2 = 0;
  ASSERT_EQ(d.dev().alloc_pd(d.ctx, &pd2), 0);
  ASSERT_EQ(d.dev().reg_mr(pd2, a, 128, kIbvLocalWrite, &key2), 0);
  expect_range_error({{a, key2, 64}});
  // A deregistered MR.
  uint32_t key3 = 0;
  ASSERT_EQ(d.dev().reg_mr(d.pd, a, 128, 0, &key3), 0);
  ASSERT_EQ(d.dev().dereg_mr(key3), 0);
  expect_range_error({{a, key3, 64}});

  // num_sge == 0: the dummy SGE is required, and an empty frame cannot be sent.
  tx.post(good, 8, {});
  EXPECT_EQ(one_error(hw::kCqeTxHdrProcessingError).vendor_err, 0u);
  tx.post(good, 8, {{2, 0, 0}}, 0);
  one_error(hw::kCqeTxInvalidOob);

  // Injected bad lkeys: the next 2 WQEs fail, the third passes.
  d.dev().inject({Fault::Kind::kBadLkey, true, 0, 2, 0});
  const auto frame = build_frame(udp_flow(0, 0));
  ASSERT_LE(frame.size(), 64u);
  std::memset(buf, 0, 64);  // padded to 64 bytes like a minimum-size frame
  std::memcpy(buf, frame.data(), frame.size());
  for (int i = 0; i < 3; ++i) tx.post(good, 8, {{a, d.lkey, 64}});
  auto c = run();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].type, hw::kCqeTxInvalidOob);
  EXPECT_EQ(c[1].type, hw::kCqeTxInvalidOob);
  EXPECT_EQ(c[2].type, hw::kCqeTxOkay);
}

// The device keeps the last MR an SGE named: deregistering that MR must end its use too. A new MR
// over the same buffer is registered at once, so that a kept pointer to the freed MR would most
// likely find that MR's memory (the allocator reuses the block) and accept the old key.
TEST_F(TxTest, AnMrJustUsedIsRefusedOnceDeregistered) {
  const hw::TxOob good = tx.oob({});
  uint8_t* buf = d.alloc(128);
  const uint64_t a = reinterpret_cast<uint64_t>(buf);
  const auto frame = build_frame(udp_flow(0, 0));
  ASSERT_LE(frame.size(), 64u);
  std::memset(buf, 0, 64);
  std::memcpy(buf, frame.data(), frame.size());
  uint32_t key = 0;
  ASSERT_EQ(d.dev().reg_mr(d.pd, a, 128, 0, &key), 0);
  tx.post(good, 8, {{a, key, 64}});
  auto c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxOkay);
  wire().sent.clear();
  ASSERT_EQ(d.dev().dereg_mr(key), 0);
  uint32_t key2 = 0;
  ASSERT_EQ(d.dev().reg_mr(d.pd, a, 128, 0, &key2), 0);
  ASSERT_NE(key2, key);
  tx.post(good, 8, {{a, key, 64}});
  EXPECT_EQ(one_error(hw::kCqeTxInvalidOob).vendor_err, hw::kVendorErrAddrRange);
  tx.post(good, 8, {{a, key2, 64}});
  c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxOkay);
}

TEST_F(TxTest, FrameLengthAndSourceChecks) {
  // MTU 1500: a 1514-byte frame passes, 1515 does not; a tagged frame may have 1518.
  tx.post_frame(build_frame(udp_flow(0, 0, 1500 - 28)));
  EXPECT_EQ(run()[0].type, hw::kCqeTxOkay);
  wire().sent.clear();
  tx.post_frame(build_frame(udp_flow(0, 0, 1500 - 27)));
  one_error(hw::kCqeTxMtuDrop);
  FlowSpec tagged = udp_flow(0, 0, 1500 - 28);
  tagged.vlan_tci = 5;
  wire().sent.clear();
  tx.post_frame(build_frame(tagged));
  EXPECT_EQ(run()[0].type, hw::kCqeTxOkay);
  wire().sent.clear();
  tx.post_frame(std::vector<uint8_t>(10, 0xAB));  // shorter than an Ethernet header
  one_error(hw::kCqeTxHdrProcessingError);
  // Inserting a tag into a frame that has one.
  TxOptions vlan;
  vlan.long_oob = vlan.inject_vlan = true;
  vlan.tci = 7;
  FlowSpec small = udp_flow(0, 0);
  small.vlan_tci = 9;
  tx.post_frame(build_frame(small), vlan);
  one_error(hw::kCqeTxVlanTaggingViolation);
  // Injected error CQEs.
  d.dev().inject({Fault::Kind::kErrorCqe, true, 0, 2, hw::kCqeTxVfDisabled});
  for (int i = 0; i < 3; ++i) tx.post_frame(build_frame(udp_flow(0, 0)));
  auto c = run();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].type, hw::kCqeTxVfDisabled);
  EXPECT_EQ(c[1].type, hw::kCqeTxVfDisabled);
  EXPECT_EQ(c[2].type, hw::kCqeTxOkay);
  EXPECT_EQ(wire().sent.size(), 1u);
}

TEST(TxAntiSpoof, ForeignSourceMacIsDropped) {
  VfConfig c = test_config(1);
  c.anti_spoof = true;
  Driver d(c);
  TxQueue tx(d, 1);
  tx.post_frame(build_frame(udp_flow(1, 0)));  // source MAC of port 1
  tx.post_frame(build_frame(udp_flow(0, 1)));
  tx.doorbell();
  d.dev().poll();
  auto cs = drain(tx.cq);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].type, hw::kCqeTxSaDrop);
  EXPECT_EQ(cs[1].type, hw::kCqeTxOkay);
  EXPECT_EQ(d.wire(0).sent.size(), 1u);
}

TEST_F(TxTest, ChecksumOffloadsCompleteTheDriversSeed) {
  for (bool v6 : {false, true}) {
    for (uint8_t proto : {uint8_t{6}, uint8_t{17}}) {
      FlowSpec f = udp_flow(0, 0, 33);
      f.ipv6 = v6;
      f.proto = proto;
      if (v6) {
        f.src = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
        f.dst = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
      }
      const std::vector<uint8_t> correct = build_frame(f);
      std::vector<uint8_t> posted = correct;
      // What a driver hands over: pseudo-header seed in the L4 field, stale IPv4 checksum.
      store_be16(&posted[l4_checksum_offset(f)], pseudo_header_seed(correct, f));
      TxOptions o;
      o.ipv4 = !v6;
      o.ipv6 = v6;
      o.ip_csum = !v6;
      (proto == 6 ? o.tcp_csum : o.udp_csum) = true;
      o.transport_offset = l4_offset(f);
      if (!v6) store_be16(&posted[kL3 + 10], 0xBEEF);
      tx.post_frame(posted, o);
      auto c = run();
      ASSERT_EQ(c.size(), 1u);
      ASSERT_EQ(wire().sent.size(), 1u);
      const std::vector<uint8_t>& out = wire().sent[0];
      EXPECT_EQ(load_be16(&out[l4_checksum_offset(f)]), expected_l4_checksum(correct, f))
          << "v6=" << v6 << " proto=" << int(proto);
      EXPECT_EQ(out, correct);
      wire().sent.clear();
    }
  }
}

TEST_F(TxTest, VlanInsertion) {
  TxOptions o;
  o.long_oob = o.inject_vlan = true;
  o.tci = (5 << 13) | (1 << 12) | 0xABC;
  const std::vector<uint8_t> frame = build_frame(udp_flow(0, 0));
  tx.post_frame(frame, o);
  auto c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxOkay);
  EXPECT_EQ(c[0].wqe_offset, 0u);
  ASSERT_EQ(wire().sent.size(), 1u);
  FlowSpec tagged = udp_flow(0, 0);
  tagged.vlan_tci = o.tci;
  EXPECT_EQ(wire().sent[0], build_frame(tagged));
}

TEST_F(TxTest, DoorbellsOfOtherContextsUnknownIdsAndOverrunsAreIgnored) {
  tx.post_frame(build_frame(udp_flow(0, 0)));
  const uint64_t db = hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * 32);
  PageBuffer page2(4096);
  uint32_t ctx2 = 0;
  ASSERT_EQ(d.dev().open_context(reinterpret_cast<volatile uint64_t*>(page2.data()), &ctx2), 0);
  d.dev().ring(ctx2, hw::kSqDoorbellOffset, db);
  d.dev().ring(d.ctx, hw::kSqDoorbellOffset, hw::sq_doorbell(tx.binding.sq_id ^ 0x800, 32));
  d.dev().ring(d.ctx, hw::kSqDoorbellOffset, hw::sq_doorbell(tx.binding.sq_id, 4096 + 32));
  d.dev().ring(d.ctx, 0x123 * 8, db);
  d.dev().poll();
  EXPECT_EQ(d.dev().bad_doorbells(), 4u);
  EXPECT_TRUE(wire().sent.empty());
  EXPECT_EQ(d.dev().sq_counters(tx.binding.sq_id).doorbells, 0u);
  tx.doorbell();
  d.dev().poll();
  EXPECT_EQ(wire().sent.size(), 1u);
  EXPECT_EQ(d.dev().sq_counters(tx.binding.sq_id).doorbells, 1u);
}

TEST_F(TxTest, PollModeSeesDoorbellsWrittenToThePage) {
  d.dev().set_poll_doorbells(true);
  auto* page = reinterpret_cast<volatile uint64_t*>(d.page.data());
  for (int i = 0; i < 3; ++i) {
    tx.post_frame(build_frame(udp_flow(0, 0)));
    page[hw::kSqDoorbellOffset / 8] = hw::sq_doorbell(tx.binding.sq_id, tx.head_bu * 32);
    d.dev().poll();
    EXPECT_EQ(wire().sent.size(), static_cast<size_t>(i + 1));
  }
  d.dev().poll();  // an unchanged page is no doorbell
  EXPECT_EQ(d.dev().sq_counters(tx.binding.sq_id).doorbells, 3u);
  // Trap-mode stores are honoured at the same time.
  tx.post_frame(build_frame(udp_flow(0, 0)));
  tx.doorbell();
  d.dev().poll();
  EXPECT_EQ(wire().sent.size(), 4u);
  EXPECT_EQ(drain(tx.cq).size(), 4u);
}

TEST_F(TxTest, AWqeLongerThanTheAnnouncedWorkFailsAndIsSkipped) {
  const std::vector<uint8_t> frame = build_frame(udp_flow(0, 0));
  uint8_t* buf = d.alloc(static_cast<uint32_t>(frame.size()));
  std::memcpy(buf, frame.data(), frame.size());
  // The header says 3 SGEs (2 BUs) but the doorbell announces only 1 BU.
  tx.post(tx.oob({}), 8,
          {{reinterpret_cast<uint64_t>(buf), d.lkey, static_cast<uint32_t>(frame.size())}}, 3);
  d.dev().ring(d.ctx, hw::kSqDoorbellOffset, hw::sq_doorbell(tx.binding.sq_id, 32));
  d.dev().poll();
  auto c = drain(tx.cq);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxInvalidOob);
  EXPECT_TRUE(wire().sent.empty());
  // The queue carries on after the skipped work.
  tx.post_frame(frame);
  c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxOkay);
  EXPECT_EQ(c[0].wqe_offset, 1u);
}

TEST_F(TxTest, WireRefusalIsCountedNotAnError) {
  wire().accept = false;
  tx.post_frame(build_frame(udp_flow(0, 0)));
  auto c = run();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type, hw::kCqeTxOkay);
  EXPECT_EQ(d.dev().port_counters(0).tx_wire_drops, 1u);
  EXPECT_EQ(d.dev().port_counters(0).tx_frames, 0u);
}

}  // namespace
}  // namespace mana::emu::test
