// SPDX-License-Identifier: BSD-3-Clause
// Open hardware behaviours of the TX path and fault placement: vport-offset with the short and
// long OOB fields, checksum offload computed where the OOB says (not where a parser finds the
// headers), and error-CQE faults on any WQE of a burst (skip/every).
#include <gtest/gtest.h>

#include <cstring>

#include "driver.h"
#include "frames.h"
#include "rx_common.h"

namespace mana::emu::test {
namespace {

using S = hw::TxShortOob;
using L = hw::TxLongOob;

FlowSpec flow(uint8_t proto = 17, bool ipv6 = false) {
  FlowSpec f = ip_flow(proto, ipv6, port_mac(0), port_mac(0));
  f.payload = 33;
  return f;
}

VfConfig with_vport_offset(uint32_t offset, unsigned ports = 1) {
  VfConfig c = test_config(ports);
  c.hw.vport_offset = offset;
  return c;
}

// Posts one frame with the given OOB and returns its completion type.
uint32_t send_with(Driver& d, TxQueue& tx, const hw::TxOob& oob, bool long_oob) {
  const std::vector<uint8_t> f = build_frame(flow());
  uint8_t* buf = d.alloc(static_cast<uint32_t>(f.size()));
  std::memcpy(buf, f.data(), f.size());
  tx.post(oob, long_oob ? hw::kLongOobSize : hw::kShortOobSize,
          {{reinterpret_cast<uint64_t>(buf), d.lkey, static_cast<uint32_t>(f.size())}});
  tx.doorbell();
  d.dev().poll();
  const hw::Cqe* c = tx.cq.next();
  EXPECT_NE(c, nullptr);
  return c ? c->type() : 0;
}

TEST(HwVportOffset, ZeroKeepsASmallOffsetChosenPerRun) {
  Driver d(with_vport_offset(0, 2));
  TxQueue a(d, 1), b(d, 2);
  EXPECT_GE(a.binding.tx_vp_offset, 1u);
  EXPECT_LE(a.binding.tx_vp_offset, 100u);
  EXPECT_EQ(b.binding.tx_vp_offset, a.binding.tx_vp_offset + 1);
}

TEST(HwVportOffset, ShortFieldUpTo255) {
  Driver d(with_vport_offset(200, 2));
  TxQueue a(d, 1), b(d, 2);
  EXPECT_EQ(a.binding.tx_vp_offset, 200u);
  EXPECT_EQ(b.binding.tx_vp_offset, 201u);
  EXPECT_EQ(send_with(d, a, a.oob({}), false), hw::kCqeTxOkay);
  // The long format for VLAN insertion with the long field 0: the short field counts (DPDK).
  TxOptions vlan;
  vlan.long_oob = vlan.inject_vlan = true;
  vlan.tci = 7;
  EXPECT_EQ(send_with(d, a, a.oob(vlan), true), hw::kCqeTxOkay);
  // A non-zero long field wins over the short one.
  hw::TxOob wrong = a.oob(vlan);
  wrong.l.dw3 = L::LongVportOffset::set(0, 201);
  EXPECT_EQ(send_with(d, a, wrong, true), hw::kCqeTxVportIdxOutOfRange);
  hw::TxOob other_port = a.oob({});
  other_port.s.dw1 = S::VportOffset::set(other_port.s.dw1, 201);
  EXPECT_EQ(send_with(d, a, other_port, false), hw::kCqeTxVportIdxOutOfRange);
}

// A tag to insert into a frame that carries one (doc/hardware.md §9.23): refused with
// CQE_TX_VLAN_TAGGING_VIOLATION, or inserted as the outer tag, by tx-vlan-into-tagged.
TEST(HwTxVlanIntoTagged, RefusedOrInsertedOutside) {
  for (const bool refuse : {true, false}) {
    VfConfig c = test_config(1);
    c.hw.tx_vlan_refuse_tagged = refuse;
    Driver d(c);
    TxQueue tx(d, 1);
    FlowSpec inner = flow();
    inner.vlan_tci = 0x123;
    const std::vector<uint8_t> f = build_frame(inner);
    uint8_t* buf = d.alloc(static_cast<uint32_t>(f.size()));
    std::memcpy(buf, f.data(), f.size());
    TxOptions vlan;
    vlan.long_oob = vlan.inject_vlan = true;
    vlan.tci = 7;
    tx.post(tx.oob(vlan), hw::kLongOobSize,
            {{reinterpret_cast<uint64_t>(buf), d.lkey, static_cast<uint32_t>(f.size())}});
    tx.doorbell();
    d.dev().poll();
    const hw::Cqe* cqe = tx.cq.next();
    ASSERT_NE(cqe, nullptr);
    EXPECT_EQ(cqe->type(), refuse ? hw::kCqeTxVlanTaggingViolation : hw::kCqeTxOkay) << refuse;
  }
}

TEST(HwVportOffset, AboveTheShortFieldOnlyTheLongFormatReachesThePort) {
  Driver d(with_vport_offset(300));
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.binding.tx_vp_offset, 300u);
  // The short format's 8 bits cannot say 300: whatever it carries is another vPort.
  EXPECT_EQ(send_with(d, tx, tx.oob({}), false), hw::kCqeTxVportIdxOutOfRange);
  // mana_start_xmit: long format, long_vp_offset = 300, short field 0.
  TxOptions o;
  o.long_oob = true;
  hw::TxOob long_vp = tx.oob(o);
  long_vp.s.dw1 = S::VportOffset::set(long_vp.s.dw1, 0);
  long_vp.l.dw3 = L::LongVportOffset::set(0, 300);
  EXPECT_EQ(send_with(d, tx, long_vp, true), hw::kCqeTxOkay);
  // The long field in a short-format WQE is not read (it is not there).
  hw::TxOob short_fmt = long_vp;
  short_fmt.s.dw0 = S::Format::set(short_fmt.s.dw0, 0);
  EXPECT_EQ(send_with(d, tx, short_fmt, false), hw::kCqeTxVportIdxOutOfRange);
  EXPECT_EQ(d.wire(0).sent.size(), 1u);
}

// ---- checksum offload where the OOB says

class HwTxChecksum : public ::testing::Test {
 protected:
  Driver d{test_config(1)};
  TxQueue tx{d, 1};
  // What a driver hands over: pseudo-header seed in the L4 field, a stale IPv4 checksum.
  static std::vector<uint8_t> seeded(const FlowSpec& f) {
    FlowSpec untagged = f;
    untagged.vlan_tci.reset();
    const std::vector<uint8_t> correct = build_frame(untagged);
    std::vector<uint8_t> b = correct;
    store_be16(&b[l4_checksum_offset(f)], pseudo_header_seed(correct, untagged));
    if (!f.ipv6) store_be16(&b[kL3 + 10], 0xBEEF);
    if (f.vlan_tci) {
      const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(*f.vlan_tci >> 8),
                              static_cast<uint8_t>(*f.vlan_tci)};
      b.insert(b.begin() + 12, tag, tag + 4);
    }
    return b;
  }
  std::vector<uint8_t> send(const std::vector<uint8_t>& frame, const TxOptions& o) {
    tx.post_frame(frame, o);
    tx.doorbell();
    d.dev().poll();
    const hw::Cqe* c = tx.cq.next();
    EXPECT_NE(c, nullptr);
    if (c) {
      EXPECT_EQ(c->type(), hw::kCqeTxOkay);
    }
    EXPECT_EQ(d.wire(0).sent.size(), 1u);
    if (d.wire(0).sent.empty()) return {};
    std::vector<uint8_t> out = d.wire(0).sent.back();
    d.wire(0).sent.clear();
    return out;
  }
  static TxOptions offload(const FlowSpec& f) {
    TxOptions o;
    o.ipv4 = !f.ipv6;
    o.ipv6 = f.ipv6;
    o.ip_csum = !f.ipv6;
    (f.proto == 6 ? o.tcp_csum : o.udp_csum) = true;
    if (f.proto == 6) o.transport_offset = l4_offset(f);  // UDP: none, as the kernel and DPDK
    return o;
  }
};

TEST_F(HwTxChecksum, CorrectOobGivesCorrectChecksums) {
  for (bool v6 : {false, true})
    for (uint8_t proto : {uint8_t{6}, uint8_t{17}}) {
      const FlowSpec f = flow(proto, v6);
      EXPECT_EQ(send(seeded(f), offload(f)), build_frame(f)) << "v6 " << v6 << " proto " << +proto;
    }
}

TEST_F(HwTxChecksum, TcpChecksumGoesWhereTheTransportOffsetPoints) {
  const FlowSpec f = flow(6);
  TxOptions o = offload(f);
  o.transport_offset = l4_offset(f) + 4;  // a driver's wrong l2_len/l3_len
  const std::vector<uint8_t> out = send(seeded(f), o);
  ASSERT_EQ(out.size(), build_frame(f).size());
  EXPECT_NE(out, build_frame(f));
  EXPECT_NE(load_be16(&out[l4_checksum_offset(f)]), expected_l4_checksum(build_frame(f), f));
  EXPECT_EQ(load_be16(&out[kL3 + 10]), load_be16(&build_frame(f)[kL3 + 10]));  // IPv4 still ok
}

TEST_F(HwTxChecksum, WithoutAnIpVersionBitNothingIsComputed) {
  for (uint8_t proto : {uint8_t{6}, uint8_t{17}}) {
    const FlowSpec f = flow(proto);
    TxOptions o = offload(f);
    o.ipv4 = false;
    const std::vector<uint8_t> posted = seeded(f);
    EXPECT_EQ(send(posted, o), posted) << +proto;  // seed and stale IPv4 checksum go out as-is
  }
}

TEST_F(HwTxChecksum, TheWrongIpVersionBitGivesAWrongL4Checksum) {
  const FlowSpec f = flow(17);
  TxOptions o = offload(f);
  o.ipv4 = false;
  o.ipv6 = true;  // UDP then sits 40 bytes after L3, inside the payload
  const std::vector<uint8_t> out = send(seeded(f), o);
  EXPECT_NE(load_be16(&out[l4_checksum_offset(f)]), expected_l4_checksum(build_frame(f), f));
  EXPECT_EQ(load_be16(&out[kL3 + 10]), 0xBEEF);  // no IPv4 bit: no IPv4 header checksum
}

TEST_F(HwTxChecksum, UdpIgnoresTheTransportOffsetAndFollowsTheIhl) {
  const FlowSpec f = flow(17);
  TxOptions o = offload(f);
  o.transport_offset = 3;  // not read for UDP
  EXPECT_EQ(send(seeded(f), o), build_frame(f));
}

TEST_F(HwTxChecksum, ATagInTheDataMovesL3AndInsertionDoesNot) {
  FlowSpec tagged = flow(6);
  tagged.vlan_tci = 0x123;
  TxOptions o = offload(tagged);
  o.transport_offset = l4_offset(tagged) + 4;  // after the tag
  EXPECT_EQ(send(seeded(tagged), o), build_frame(tagged));
  // Inserted by the NIC: offsets are those of the frame the driver built.
  const FlowSpec plain = flow(6);
  TxOptions insert = offload(plain);
  insert.long_oob = insert.inject_vlan = true;
  insert.tci = 0x123;
  EXPECT_EQ(send(seeded(plain), insert), build_frame(tagged));
}

// ---- faults on any WQE of a burst

class HwFaultPlacement : public ::testing::Test {
 protected:
  explicit HwFaultPlacement(VfConfig config = test_config(1)) : d(config) {}
  Driver d;
  TxQueue tx{d, 1};
  void inject(bool is_tx, uint32_t count, uint32_t skip, uint32_t every, uint32_t type) {
    Fault f;
    f.tx = is_tx;
    f.count = count;
    f.skip = skip;
    f.every = every;
    f.cqe_type = type;
    d.dev().inject(f);
  }
  // A burst of `n` WQEs with CQE suppression on all but the last (DPDK >= 23.07); returns the
  // (WQE index, CQE type) of each completion.
  std::vector<std::pair<uint32_t, uint32_t>> burst(unsigned n) {
    const uint32_t first = tx.head_bu;
    for (unsigned i = 0; i < n; ++i) {
      TxOptions o;
      o.suppress = i + 1 < n;
      tx.post_frame(build_frame(flow()), o);
    }
    tx.doorbell();
    d.dev().poll();
    std::vector<std::pair<uint32_t, uint32_t>> out;
    const bool bytes = d.dev().config().hw.tx_wqe_offset == HwBehaviour::TxWqeOffset::kBytes;
    while (const hw::Cqe* c = tx.cq.next()) {
      const uint32_t field = hw::Cqe::TxWqeOffset::get(c->dw[hw::Cqe::kTxWqeOffsetDword]);
      out.emplace_back((bytes ? field / 32 : field) - first, c->type());  // one BU per WQE
      raw_offsets.push_back(field);
    }
    return out;
  }
  using Completions = std::vector<std::pair<uint32_t, uint32_t>>;
  std::vector<uint32_t> raw_offsets;  // tx_wqe_offset of every CQE so far
};

// hw tx-wqe-offset=bytes: the same completions, the WQE named by its byte offset.
class HwFaultPlacementBytes : public HwFaultPlacement {
 protected:
  static VfConfig bytes_config() {
    VfConfig c = test_config(1);
    c.hw.tx_wqe_offset = HwBehaviour::TxWqeOffset::kBytes;
    return c;
  }
  HwFaultPlacementBytes() : HwFaultPlacement(bytes_config()) {}
};

TEST_F(HwFaultPlacementBytes, ErrorAndOkayCqesNameTheirWqeInBytes) {
  inject(true, 1, 3, 1, hw::kCqeTxMtuDrop);
  EXPECT_EQ(burst(8), (Completions{{3, hw::kCqeTxMtuDrop}, {7, hw::kCqeTxOkay}}));
  EXPECT_EQ(raw_offsets, (std::vector<uint32_t>{3 * 32, 7 * 32}));
}

TEST_F(HwFaultPlacement, TheLastWqeOfASuppressedBurst) {
  inject(true, 1, 7, 1, hw::kCqeTxInvalidOob);
  EXPECT_EQ(burst(8), (Completions{{7, hw::kCqeTxInvalidOob}}));
  EXPECT_EQ(d.wire(0).sent.size(), 7u);
  EXPECT_EQ(burst(8), (Completions{{7, hw::kCqeTxOkay}}));  // one fault only
}

TEST_F(HwFaultPlacement, AMiddleWqeOfASuppressedBurstStillCompletes) {
  inject(true, 1, 3, 1, hw::kCqeTxMtuDrop);
  EXPECT_EQ(burst(8), (Completions{{3, hw::kCqeTxMtuDrop}, {7, hw::kCqeTxOkay}}));
  EXPECT_EQ(d.wire(0).sent.size(), 7u);
}

TEST_F(HwFaultPlacement, EveryKthWqeAcrossBursts) {
  inject(true, 3, 1, 4, hw::kCqeTxInvalidOob);  // WQEs 1, 5 and 9 of the stream
  EXPECT_EQ(burst(6), (Completions{{1, hw::kCqeTxInvalidOob},
                                   {5, hw::kCqeTxInvalidOob}}));  // 5 is the burst's last
  EXPECT_EQ(burst(6), (Completions{{3, hw::kCqeTxInvalidOob}, {5, hw::kCqeTxOkay}}));
  EXPECT_EQ(d.dev().sq_counters(tx.binding.sq_id).error_cqes, 3u);
  EXPECT_EQ(d.wire(0).sent.size(), 9u);
}

TEST_F(HwFaultPlacement, TheFirstWqeWithoutSkip) {
  inject(true, 2, 0, 1, hw::kCqeTxInvalidOob);  // today's behaviour: the next two
  EXPECT_EQ(
      burst(4),
      (Completions{{0, hw::kCqeTxInvalidOob}, {1, hw::kCqeTxInvalidOob}, {3, hw::kCqeTxOkay}}));
}

TEST_F(HwFaultPlacement, RxFaultLandsOnTheChosenWqe) {
  RxSet rx(d, 1, 1);
  ASSERT_EQ(rx.status, 0);
  rx.post(0, 8, 2048);
  rx.doorbell(0);
  inject(false, 2, 2, 3, hw::kCqeRxTruncated);  // WQEs 2 and 5
  for (int i = 0; i < 7; ++i) d.wire(0).incoming.push_back(build_frame(flow()));
  d.dev().poll();
  auto c = drain_rx(rx.queues[0]->cq);
  ASSERT_EQ(c.size(), 7u);
  for (unsigned i = 0; i < 7; ++i) {
    EXPECT_EQ(c[i].type, i == 2 || i == 5 ? hw::kCqeRxTruncated : hw::kCqeRxOkay) << i;
    EXPECT_EQ(c[i].wqe_offset, i * 32) << i;
  }
}

}  // namespace
}  // namespace mana::emu::test
