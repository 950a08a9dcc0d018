// SPDX-License-Identifier: BSD-3-Clause
// The WQE writer and doorbells against the spec's byte checks (doc/hardware.md §4.1-§4.3, §4.8).
#include <cstdlib>
#include <cstring>
#include <memory>

#include <gtest/gtest.h>

#include "gdma.h"
#include "tx_oob.h"

namespace {

using namespace mana;

struct AlignedBuffer {
  explicit AlignedBuffer(size_t n)
      : p(static_cast<uint8_t*>(std::aligned_alloc(4096, n))), size(n) {
    std::memset(p, 0xAA, n);  // garbage: the writer must write every byte it owns
  }
  ~AlignedBuffer() { std::free(p); }
  uint8_t* p;
  size_t size;
};

WorkQueue make_queue(AlignedBuffer& b, uint32_t head_bu, uint32_t id) {
  return WorkQueue{
      b.p, static_cast<uint32_t>(b.size - 1), static_cast<uint32_t>(b.size / 32), head_bu, head_bu,
      id};
}

uint64_t u64_at(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// doc/hardware.md §4.3 worked example: IPv4/TCP with checksum offload, 1 segment, CQ 5, SQ 0x15,
// vPort 0.
TEST(GdmaWqe, WorkedExampleIsByteExact) {
  AlignedBuffer ring(4096);
  WorkQueue sq = make_queue(ring, 6, 0x15);
  const TxOobTemplate t = make_tx_oob_template(5, 0x15, 0);
  hw::TxShortOob oob = make_tx_short_oob(
      t, RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM, 14, 20);
  const hw::Sge sge{0x00007f0012345678ull, 0xCAFEBABE, 60};
  uint8_t* oob_in_ring = post_wqe(sq, &oob, sizeof(oob), &sge, 1);

  const uint8_t* w = ring.p + 6 * 32;
  EXPECT_EQ(oob_in_ring, w + 8);
  const uint8_t expected_head[16] = {0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00,
                                     0x34, 0x05, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00};
  EXPECT_EQ(std::memcmp(w, expected_head, 16), 0);
  EXPECT_EQ(u64_at(w + 16), 0x00007f0012345678ull);
  EXPECT_EQ(u32_at(w + 24), 0xCAFEBABEu);
  EXPECT_EQ(u32_at(w + 28), 60u);
  EXPECT_EQ(sq.head_bu, 7u);            // one basic unit
  EXPECT_EQ(ring.p[6 * 32 - 1], 0xAA);  // nothing before the WQE
  EXPECT_EQ(ring.p[7 * 32], 0xAA);      // nothing after it

  AlignedBuffer page(4096);
  ring_sq_doorbell(page.p, sq);
  EXPECT_EQ(u64_at(page.p + hw::kSqDoorbellOffset), 0x000000E000000015ull);
}

TEST(GdmaWqe, SglWrapsToRingStart) {
  AlignedBuffer ring(4096);
  WorkQueue q = make_queue(ring, 127, 9);  // the last basic unit of the ring
  const hw::Sge sgl[3] = {{0x1000, 1, 100}, {0x2000, 2, 200}, {0x3000, 3, 300}};
  const uint64_t oob = 0x1122334455667788ull;
  post_wqe(q, &oob, 8, sgl, 3);
  EXPECT_EQ(q.head_bu, 129u);  // 8 + 8 + 48 = 64 bytes
  const uint8_t* w = ring.p + 4064;
  EXPECT_EQ(u32_at(w + 4), 0x203u);  // 3 SGEs, 2 OOB dwords
  EXPECT_EQ(u64_at(w + 8), oob);
  EXPECT_EQ(u64_at(w + 16), 0x1000u);  // SGE 0 fills the end of the ring
  EXPECT_EQ(u32_at(w + 28), 100u);
  EXPECT_EQ(u64_at(ring.p + 0), 0x2000u);  // SGE 1 and 2 continue at offset 0
  EXPECT_EQ(u32_at(ring.p + 8), 2u);
  EXPECT_EQ(u64_at(ring.p + 16), 0x3000u);
  EXPECT_EQ(u32_at(ring.p + 28), 300u);
  EXPECT_EQ(ring.p[32], 0xAA);
}

TEST(GdmaWqe, LongOobStaysContiguousAndSglWraps) {
  AlignedBuffer ring(4096);
  WorkQueue q = make_queue(ring, 127, 9);
  hw::TxOob oob{};
  oob.s = make_tx_short_oob(make_tx_oob_template(7, 0x400, 3), 0, 0, 0);
  set_tx_long_format(oob.s);
  oob.l.dw2 = make_tx_vlan_dw2(static_cast<uint16_t>((7 << 13) | (1 << 12) | 0xFFF));
  const hw::Sge sgl[2] = {{0xA000, 5, 10}, {0xB000, 6, 20}};
  post_wqe(q, &oob, sizeof(oob), sgl, 2);
  EXPECT_EQ(q.head_bu, 129u);  // 8 + 24 + 32 = 64 bytes
  const uint8_t* w = ring.p + 4064;
  EXPECT_EQ(u32_at(w + 4), 0x602u);                  // 2 SGEs, 6 OOB dwords
  EXPECT_EQ(w[8] & 3, 1);                            // long format
  EXPECT_EQ(u32_at(w + 12) >> 10 & 0x3FFF, 1u);      // VSQ frame of SQ 0x400
  EXPECT_EQ(w[15], 3);                               // vPort offset
  const uint8_t vlan[4] = {0x08, 0x00, 0xFF, 0xFF};  // inject, PCP 7, DEI 1, VID 0xFFF
  EXPECT_EQ(std::memcmp(w + 16, vlan, 4), 0);
  EXPECT_EQ(u64_at(ring.p + 0), 0xA000u);
  EXPECT_EQ(u64_at(ring.p + 16), 0xB000u);
}

// doc/hardware.md §4.3 long-OOB byte checks.
TEST(GdmaWqe, VlanOobByteChecks) {
  const uint32_t pcp = make_tx_vlan_dw2(7 << 13);
  const uint8_t pcp_bytes[4] = {0x08, 0x00, 0x07, 0x00};
  EXPECT_EQ(std::memcmp(&pcp, pcp_bytes, 4), 0);
  const uint32_t vid = make_tx_vlan_dw2((1 << 12) | 0xFFF);
  const uint8_t vid_bytes[4] = {0x08, 0x00, 0xF8, 0xFF};  // 00 00 f8 ff plus the inject bit
  EXPECT_EQ(std::memcmp(&vid, vid_bytes, 4), 0);
}

// doc/hardware.md §4.3: a vPort offset above 255 goes into the long OOB's 12-bit field (the Linux
// driver's rule), the short field stays 0; up to 255 the short OOB carries it.
TEST(GdmaWqe, VportOffsetAbove255UsesTheLongOob) {
  const TxOobTemplate short_t = make_tx_oob_template(1, 2, 255);
  EXPECT_EQ(short_t.oob_size, 8u);
  EXPECT_EQ(hw::TxShortOob::VportOffset::get(short_t.dw1), 255u);
  EXPECT_EQ(hw::TxShortOob::Format::get(short_t.dw0), 0u);
  EXPECT_EQ(short_t.long_dw3, 0u);

  const TxOobTemplate long_t = make_tx_oob_template(1, 2, 256);
  EXPECT_EQ(long_t.oob_size, 24u);
  EXPECT_EQ(hw::TxShortOob::Format::get(long_t.dw0), 1u);
  EXPECT_EQ(hw::TxShortOob::VportOffset::get(long_t.dw1), 0u);  // not truncated to 0x00 by luck
  EXPECT_EQ(hw::TxLongOob::LongVportOffset::get(long_t.long_dw3), 256u);

  hw::TxOob oob{};
  oob.s = make_tx_short_oob(make_tx_oob_template(7, 0x400, 0xFFF), 0, 0, 0);
  oob.l.dw3 = make_tx_oob_template(7, 0x400, 0xFFF).long_dw3;
  const uint8_t* b = reinterpret_cast<const uint8_t*>(&oob);
  EXPECT_EQ(b[0] & 3, 1);  // long format
  EXPECT_EQ(b[11], 0);     // short vPort offset
  EXPECT_EQ(b[14], 0xFF);  // long_vport_offset 0xFFF: bytes 14-15 ff 0f
  EXPECT_EQ(b[15], 0x0F);
}

TEST(GdmaWqe, EmptySglWritesTheDummySge) {
  AlignedBuffer ring(4096);
  WorkQueue q = make_queue(ring, 0, 1);
  const uint64_t oob = 0;
  post_wqe(q, &oob, 8, nullptr, 0);
  EXPECT_EQ(q.head_bu, 1u);
  EXPECT_EQ(u32_at(ring.p + 4), 0x200u);  // num_sge stays 0
  EXPECT_EQ(u64_at(ring.p + 16), 1u);
  EXPECT_EQ(u32_at(ring.p + 24), 0u);
  EXPECT_EQ(u32_at(ring.p + 28), 0u);
}

TEST(GdmaWqe, TxOobWritesOnlyRequestedOffloads) {
  const TxOobTemplate t = make_tx_oob_template(0xABCDEF, 0x3FFFFF, 0xFF);
  hw::TxShortOob udp = make_tx_short_oob(t, RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_UDP_CKSUM, 14, 40);
  EXPECT_EQ(udp.dw0, 0xABCDEF00u | (1u << 3) | (1u << 6));
  EXPECT_EQ(udp.dw1 & 0x3FF, 0u);  // no transport offset for UDP
  EXPECT_EQ(udp.dw1 >> 10 & 0x3FFF, 0xFFFu);
  EXPECT_EQ(udp.dw1 >> 24, 0xFFu);
  hw::TxShortOob none = make_tx_short_oob(t, RTE_MBUF_F_TX_IPV4, 14, 20);
  EXPECT_EQ(none.dw0, 0xABCDEF00u);  // no checksum request: no IP-version bit either (kernel rule)
  hw::TxShortOob tcp6 = make_tx_short_oob(t, RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM, 18, 40);
  EXPECT_EQ(tcp6.dw0, 0xABCDEF00u | (1u << 3) | (1u << 5));
  EXPECT_EQ(tcp6.dw1 & 0x3FF, 58u);  // transport offset = l2_len + l3_len
  set_tx_suppress(none, true);
  EXPECT_EQ(none.dw0 & 0xFF, 0x80u);
}

TEST(GdmaDoorbell, RqDoorbellHasZeroWqeCount) {
  AlignedBuffer ring(4096), page(4096);
  WorkQueue rq = make_queue(ring, 0, 0x123456);
  rq.head_bu = 0x12345678u / 32;
  ring_rq_doorbell(page.p, rq);
  EXPECT_EQ(u64_at(page.p + hw::kRqDoorbellOffset), 0x1234566000123456ull);
}

}  // namespace
