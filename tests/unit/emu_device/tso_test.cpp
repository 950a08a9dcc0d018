// SPDX-License-Identifier: BSD-3-Clause
// The TSO segmenter (emu/device/tso.h, doc/hardware.md §4.11): headers replicated, IP lengths and
// ids, TCP sequence numbers, flags on the first/last segment and checksums, checked against
// independently built frames.
#include "device/tso.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "driver.h"
#include "frames.h"
#include "mana/inet_checksum.h"

namespace mana::emu::test {
namespace {

constexpr Mac kSrc{0x00, 0x0d, 0x3a, 0, 0, 1};
constexpr Mac kDst{0x02, 0, 0, 0, 0, 2};
constexpr uint8_t kFin = 0x01, kPsh = 0x08, kAck = 0x10, kCwr = 0x80;

uint32_t load_be32(const uint8_t* p) { return uint32_t{load_be16(p)} << 16 | load_be16(p + 2); }

struct Packet {
  FlowSpec flow;
  std::vector<uint8_t> bytes;
  TsoRequest request;
};

// A TSO packet as the driver hands it to the NIC (the kernel's GSO form): IPv4 total length and
// header checksum 0 or IPv6 payload length 0, the TCP checksum field holding the pseudo-header sum
// without the length; FIN, PSH, CWR and ACK set.
Packet tso_packet(bool ipv6, bool vlan, uint32_t payload, uint32_t mss) {
  Packet p;
  p.flow = ip_flow(6, ipv6, kSrc, kDst);
  p.flow.payload = payload;
  if (vlan) p.flow.vlan_tci = 7;
  p.bytes = build_frame(p.flow);
  for (uint32_t i = 0; i < payload; ++i) p.bytes[p.bytes.size() - payload + i] = uint8_t(i * 7);
  const uint32_t l3 = kL3 + (vlan ? 4 : 0);
  uint8_t* ip = p.bytes.data() + l3;
  const uint32_t l4 = l4_offset(p.flow) + (vlan ? 4 : 0);
  uint8_t* tcp = p.bytes.data() + l4;
  store_be16(tcp + 4, 0xFFFF);  // sequence 0xFFFFxxxx: the increments wrap
  tcp[13] = kFin | kPsh | kAck | kCwr;
  uint32_t seed;
  if (ipv6) {
    store_be16(ip + 4, 0);
    seed = ipv6_pseudo_sum(ip, 6, 0);
  } else {
    store_be16(ip + 2, 0);
    store_be16(ip + 4, 0xFFFE);  // id: the increments wrap
    store_be16(ip + 10, 0);
    seed = ipv4_pseudo_sum(ip, 6, 0);
  }
  store_be16(tcp + 16, static_cast<uint16_t>(seed));
  p.request.header_len = l4 + (tcp[12] >> 4) * 4;
  p.request.mss = mss;
  p.request.transport_offset = l4;
  p.request.is_ipv4 = !ipv6;
  return p;
}

void expect_segments(const Packet& p) {
  const TsoRequest& r = p.request;
  const uint32_t len = static_cast<uint32_t>(p.bytes.size());
  ASSERT_TRUE(tso_headers_ok(p.bytes.data(), len, r));
  const uint32_t payload = len - r.header_len;
  const uint32_t count = tso_segment_count(len, r);
  ASSERT_EQ(count, (payload + r.mss - 1) / r.mss);
  const uint32_t l3 = r.is_ipv4 ? r.transport_offset - 20 : r.transport_offset - 40;
  const uint32_t seq0 = load_be32(p.bytes.data() + r.transport_offset + 4);
  std::vector<uint8_t> out(tso_max_segment_len(len, r));
  for (uint32_t i = 0; i < count; ++i) {
    SCOPED_TRACE(i);
    const uint32_t n = tso_build_segment(p.bytes.data(), len, r, i, out.data());
    const uint32_t data = i + 1 < count ? r.mss : payload - i * r.mss;
    ASSERT_EQ(n, r.header_len + data);
    EXPECT_EQ(0, std::memcmp(out.data(), p.bytes.data(), l3));  // Ethernet (and tag) unchanged
    EXPECT_EQ(
        0, std::memcmp(out.data() + r.header_len, p.bytes.data() + r.header_len + i * r.mss, data));
    const uint8_t* ip = out.data() + l3;
    const uint8_t* tcp = out.data() + r.transport_offset;
    const uint32_t tcp_len = n - r.transport_offset;
    if (r.is_ipv4) {
      EXPECT_EQ(load_be16(ip + 2), n - l3);
      EXPECT_EQ(load_be16(ip + 4), uint16_t(0xFFFE + (r.fixed_ip_id ? 0 : i)));
      EXPECT_EQ(csum_finish(csum_add(0, ip, 20)), 0);
      EXPECT_EQ(csum_finish(csum_add(ipv4_pseudo_sum(ip, 6, tcp_len), tcp, tcp_len)), 0);
    } else {
      EXPECT_EQ(load_be16(ip + 4), n - l3 - 40);
      EXPECT_EQ(csum_finish(csum_add(ipv6_pseudo_sum(ip, 6, tcp_len), tcp, tcp_len)), 0);
    }
    EXPECT_EQ(load_be32(tcp + 4), seq0 + i * r.mss);
    const bool first = i == 0, last = i + 1 == count;
    EXPECT_EQ(tcp[13], kAck | (first ? kCwr : 0) | (last ? kFin | kPsh : 0));
  }
}

TEST(Tso, Ipv4SegmentsCarryLengthsIdsSequenceFlagsAndChecksums) {
  expect_segments(tso_packet(false, false, 1201, 500));
}

TEST(Tso, Ipv4WithFixedIds) {
  Packet p = tso_packet(false, false, 3000, 1000);
  p.request.fixed_ip_id = true;
  expect_segments(p);
}

TEST(Tso, Ipv6BehindAVlanTag) { expect_segments(tso_packet(true, true, 64000, 1440)); }

TEST(Tso, OneSegmentWhenThePayloadFitsOrIsEmpty) {
  expect_segments(tso_packet(false, false, 500, 500));
  const Packet p = tso_packet(true, false, 0, 500);
  const uint32_t len = static_cast<uint32_t>(p.bytes.size());
  EXPECT_EQ(tso_segment_count(len, p.request), 1u);
  EXPECT_EQ(tso_max_segment_len(len, p.request), p.request.header_len);
}

TEST(Tso, HeadersThatDoNotMatchTheRequestAreRefused) {
  const Packet p = tso_packet(false, false, 1000, 500);
  const uint32_t len = static_cast<uint32_t>(p.bytes.size());
  TsoRequest r = p.request;
  r.mss = 0;
  EXPECT_FALSE(tso_headers_ok(p.bytes.data(), len, r));
  r = p.request;
  r.header_len += 4;  // more than the TCP data offset says
  EXPECT_FALSE(tso_headers_ok(p.bytes.data(), len, r));
  r = p.request;
  r.is_ipv4 = false;  // an IPv4 header called IPv6
  EXPECT_FALSE(tso_headers_ok(p.bytes.data(), len, r));
  r = p.request;
  r.transport_offset += 4;  // not where the IHL ends
  EXPECT_FALSE(tso_headers_ok(p.bytes.data(), len, r));
}

// The device's side of a TSO WQE (doc/emulator.md "TSO"): the kernel's form is required, every
// frame must fit the MTU, and the frames go to the wire.
class TsoWqe : public ::testing::Test {
 protected:
  Driver d{test_config(1)};
  TxQueue tx{d, 1};
  Packet p = tso_packet(false, false, 3000, 1000);
  TxOptions options() const {
    TxOptions o;
    o.ipv4 = o.ip_csum = o.tcp_csum = true;
    o.transport_offset = p.request.transport_offset;
    o.tso_mss = p.request.mss;
    o.tso_header = p.request.header_len;
    return o;
  }
  // Posts `p` with `o` (its source MAC the port's); returns the CQE type.
  uint32_t send(const TxOptions& o) {
    const auto mac = port_mac(0);
    std::copy(mac.begin(), mac.end(), p.bytes.begin() + 6);
    tx.post_frame(p.bytes, o);
    tx.doorbell();
    d.dev().poll();
    const hw::Cqe* c = tx.cq.next();
    return c ? c->type() : 0;
  }
};

TEST_F(TsoWqe, TheFramesGoToTheWireWithOneCqe) {
  ASSERT_EQ(send(options()), hw::kCqeTxOkay);
  const auto& sent = d.wire(0).sent;
  ASSERT_EQ(sent.size(), 3u);
  std::vector<uint8_t> out(tso_max_segment_len(static_cast<uint32_t>(p.bytes.size()), p.request));
  for (uint32_t i = 0; i < 3; ++i) {
    const uint32_t n = tso_build_segment(p.bytes.data(), static_cast<uint32_t>(p.bytes.size()),
                                         p.request, i, out.data());
    EXPECT_EQ(sent[i], std::vector<uint8_t>(out.begin(), out.begin() + n)) << i;
  }
}

TEST_F(TsoWqe, AnyOtherFormOrHeaderIsRefusedAndNothingIsSent) {
  TxOptions o = options();
  o.tso_header = p.request.header_len - 4;  // SGE 0 ends before the TCP header does
  EXPECT_EQ(send(o), hw::kCqeTxHdrProcessingError);
  o = options();
  o.tcp_csum = false;
  EXPECT_EQ(send(o), hw::kCqeTxInvalidOob);
  o = options();
  o.ipv6 = true;  // both IP versions
  EXPECT_EQ(send(o), hw::kCqeTxInvalidOob);
  EXPECT_TRUE(d.wire(0).sent.empty());
}

TEST_F(TsoWqe, EveryFrameMustFitTheMtuNotThePacket) {
  TxOptions o = options();
  o.tso_mss = 1500 - 40 + 1;  // headers + MSS one byte above the MTU
  EXPECT_EQ(send(o), hw::kCqeTxMtuDrop);
  EXPECT_TRUE(d.wire(0).sent.empty());
  o.tso_mss = 1500 - 40;  // exactly the MTU: 3040 bytes of packet in 3 frames
  EXPECT_EQ(send(o), hw::kCqeTxOkay);
  EXPECT_EQ(d.wire(0).sent.size(), 3u);
}

}  // namespace
}  // namespace mana::emu::test
