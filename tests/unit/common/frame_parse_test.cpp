// SPDX-License-Identifier: BSD-3-Clause
// parse_frame on hand-built frames: L2/VLAN, IPv4 (IHL, fragments, bad lengths), IPv6 extension
// headers, TCP/UDP; and every truncation of each frame placed against an unmapped page, so a read
// past `len` crashes the test.
#include "mana/frame_parse.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>

namespace {

using mana::FrameInfo;
using mana::parse_frame;
using Bytes = std::vector<uint8_t>;

void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
void append(Bytes& b, std::initializer_list<uint8_t> bytes) { b.insert(b.end(), bytes); }
void fill(Bytes& b, size_t count, uint8_t value) { b.resize(b.size() + count, value); }
void set16(Bytes& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}

Bytes ethernet(uint16_t ethertype, int vlan_tci = -1) {
  Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
  if (vlan_tci >= 0) {
    put16(b, 0x8100);
    put16(b, static_cast<uint16_t>(vlan_tci));
  }
  put16(b, ethertype);
  return b;
}

// IPv4 header with `options_words` 32-bit option words; total length = header + `payload`.
void ipv4(Bytes& b, uint8_t proto, uint32_t payload, unsigned options_words = 0,
          uint16_t flags_offset = 0x4000 /* DF */) {
  const unsigned ihl = 5 + options_words;
  append(b, {static_cast<uint8_t>(0x40 | ihl), 0});
  put16(b, static_cast<uint16_t>(ihl * 4 + payload));
  put16(b, 0x1234);
  put16(b, flags_offset);
  append(b, {64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2});
  for (unsigned i = 0; i < options_words; ++i) append(b, {1, 1, 1, 1});  // NOPs
}

void ipv6(Bytes& b, uint8_t next, uint32_t payload) {
  append(b, {0x60, 0, 0, 0});
  put16(b, static_cast<uint16_t>(payload));
  append(b, {next, 64});
  for (int i = 0; i < 32; ++i) b.push_back(static_cast<uint8_t>(0xfd + i));
}

// A generic extension header of (units + 1) * 8 bytes.
void ipv6_ext(Bytes& b, uint8_t next, uint8_t units) {
  append(b, {next, units});
  fill(b, (units + 1u) * 8 - 2, 0);
}

void ipv6_fragment(Bytes& b, uint8_t next, uint16_t offset_units, bool more) {
  append(b, {next, 0});
  put16(b, static_cast<uint16_t>((offset_units << 3) | (more ? 1 : 0)));
  append(b, {0, 0, 0, 42});
}

void tcp(Bytes& b, unsigned data_offset_words, uint32_t payload) {
  append(b, {0x04, 0x00, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0});
  b.push_back(static_cast<uint8_t>(data_offset_words << 4));
  append(b, {0x18, 0xff, 0xff, 0, 0, 0, 0});
  fill(b, (data_offset_words - 5) * 4 + payload, 0xAA);
}

void udp(Bytes& b, uint32_t payload) {
  append(b, {0x30, 0x39, 0x00, 0x35});
  put16(b, static_cast<uint16_t>(8 + payload));
  append(b, {0, 0});
  fill(b, payload, 0xBB);
}

// Parses a copy of `frame` that ends exactly at an inaccessible page.
class GuardedFrame {
 public:
  GuardedFrame() {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mem_ = static_cast<uint8_t*>(
        mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(mem_, MAP_FAILED);
    EXPECT_EQ(mprotect(mem_ + page_, page_, PROT_NONE), 0);
  }
  ~GuardedFrame() { munmap(mem_, 2 * page_); }
  bool parse(const uint8_t* frame, uint32_t len, FrameInfo* info) {
    uint8_t* at = mem_ + page_ - len;
    std::memcpy(at, frame, len);
    return parse_frame(at, len, info);
  }

 private:
  size_t page_ = 0;
  uint8_t* mem_ = nullptr;
};

FrameInfo parse(const Bytes& frame) {
  GuardedFrame guarded;
  FrameInfo info;
  EXPECT_TRUE(guarded.parse(frame.data(), static_cast<uint32_t>(frame.size()), &info));
  return info;
}

TEST(FrameParse, TooShortForEthernet) {
  GuardedFrame guarded;
  const Bytes eth = ethernet(0x0800);
  FrameInfo info;
  EXPECT_FALSE(guarded.parse(eth.data(), 13, &info));
  EXPECT_TRUE(guarded.parse(eth.data(), 14, &info));
  EXPECT_EQ(info.ethertype, 0x0800);
  EXPECT_EQ(info.l3, FrameInfo::L3::kNone);  // no IPv4 header present
  EXPECT_FALSE(info.ipv4_header_ok);
  EXPECT_EQ(info.l3_len, 0u);
}

TEST(FrameParse, NonIpFrame) {
  Bytes f = ethernet(0x0806);
  fill(f, 28, 0);
  const FrameInfo info = parse(f);
  EXPECT_EQ(info.len, 42u);
  EXPECT_EQ(info.ethertype, 0x0806);
  EXPECT_EQ(info.l3, FrameInfo::L3::kNone);
  EXPECT_EQ(info.l3_offset, 14u);
  EXPECT_EQ(info.l4_offset, 0u);
}

TEST(FrameParse, Ipv4Tcp) {
  Bytes f = ethernet(0x0800);
  ipv4(f, 6, 20 + 100);
  tcp(f, 5, 100);
  const FrameInfo info = parse(f);
  EXPECT_FALSE(info.vlan);
  EXPECT_EQ(info.l3, FrameInfo::L3::kIpv4);
  EXPECT_TRUE(info.ipv4_header_ok);
  EXPECT_FALSE(info.fragment);
  EXPECT_EQ(info.l3_offset, 14u);
  EXPECT_EQ(info.l3_len, 20u);
  EXPECT_EQ(info.l4_proto, 6);
  EXPECT_EQ(info.l4_offset, 34u);
  EXPECT_EQ(info.l4_len, 120u);
  EXPECT_EQ(info.l4_header_len, 20u);
}

TEST(FrameParse, Ipv4OptionsAndTcpOptions) {
  Bytes f = ethernet(0x0800);
  ipv4(f, 6, 32 + 7, /*options_words=*/3);
  tcp(f, 8, 7);
  const FrameInfo info = parse(f);
  EXPECT_TRUE(info.ipv4_header_ok);
  EXPECT_EQ(info.l3_len, 32u);
  EXPECT_EQ(info.l4_offset, 14u + 32u);
  EXPECT_EQ(info.l4_header_len, 32u);
  EXPECT_EQ(info.l4_len, 39u);
}

TEST(FrameParse, VlanTaggedIpv4UdpWithEthernetPadding) {
  Bytes f = ethernet(0x0800, 0xA00C);  // PCP 5, VID 12
  ipv4(f, 17, 8 + 2);
  udp(f, 2);
  fill(f, 14, 0);  // padding to the 64-byte minimum is not IP payload
  const FrameInfo info = parse(f);
  EXPECT_TRUE(info.vlan);
  EXPECT_EQ(info.vlan_tci, 0xA00C);
  EXPECT_EQ(info.ethertype, 0x0800);
  EXPECT_EQ(info.l3_offset, 18u);
  EXPECT_TRUE(info.ipv4_header_ok);
  EXPECT_EQ(info.l4_proto, 17);
  EXPECT_EQ(info.l4_offset, 38u);
  EXPECT_EQ(info.l4_len, 10u);
  EXPECT_EQ(info.l4_header_len, 8u);
}

TEST(FrameParse, Ipv4Fragments) {
  for (uint16_t flags_offset :
       {0x2000 /* MF, first */, 0x00B9 /* last, offset 185*8 */, 0x2010 /* middle */}) {
    Bytes f = ethernet(0x0800);
    ipv4(f, 17, 8 + 40, 0, flags_offset);
    udp(f, 40);
    const FrameInfo info = parse(f);
    EXPECT_TRUE(info.fragment) << flags_offset;
    EXPECT_TRUE(info.ipv4_header_ok);
    EXPECT_EQ(info.l4_proto, 17);
    EXPECT_EQ(info.l4_offset, 0u) << "no L4 header is parsed in a fragment";
    EXPECT_EQ(info.l4_len, 0u);
  }
  Bytes df = ethernet(0x0800);
  ipv4(df, 17, 8, 0, 0x4000);  // DF alone is not a fragment
  udp(df, 0);
  EXPECT_FALSE(parse(df).fragment);
}

TEST(FrameParse, Ipv4BadHeaders) {
  Bytes base = ethernet(0x0800);
  ipv4(base, 17, 8);
  udp(base, 0);

  Bytes bad_version = base;
  bad_version[14] = 0x65;
  EXPECT_FALSE(parse(bad_version).ipv4_header_ok);
  EXPECT_EQ(parse(bad_version).l3, FrameInfo::L3::kNone);

  Bytes small_ihl = base;
  small_ihl[14] = 0x44;
  EXPECT_FALSE(parse(small_ihl).ipv4_header_ok);
  EXPECT_EQ(parse(small_ihl).l3, FrameInfo::L3::kIpv4);
  EXPECT_EQ(parse(small_ihl).l3_len, 0u);

  Bytes ihl_past_frame = base;
  ihl_past_frame[14] = 0x4F;  // 60-byte header in a 42-byte frame
  EXPECT_FALSE(parse(ihl_past_frame).ipv4_header_ok);

  Bytes total_too_long = base;
  set16(total_too_long, 16, 29);  // one byte more than the frame holds
  FrameInfo info = parse(total_too_long);
  EXPECT_FALSE(info.ipv4_header_ok);
  EXPECT_EQ(info.l4_offset, 0u);

  Bytes total_below_header = base;
  set16(total_below_header, 16, 19);
  EXPECT_FALSE(parse(total_below_header).ipv4_header_ok);

  Bytes udp_cut_by_total = base;
  set16(udp_cut_by_total, 16, 27);  // 7 bytes of UDP header inside the IP payload
  info = parse(udp_cut_by_total);
  EXPECT_TRUE(info.ipv4_header_ok);
  EXPECT_EQ(info.l4_offset, 0u);
}

TEST(FrameParse, TcpBadDataOffset) {
  Bytes f = ethernet(0x0800);
  ipv4(f, 6, 20);
  tcp(f, 5, 0);
  f[14 + 20 + 12] = 0x40;  // data offset 4 words < 5
  EXPECT_EQ(parse(f).l4_offset, 0u);
  f[14 + 20 + 12] = 0x60;  // 24 bytes > 20 in the IP payload
  EXPECT_EQ(parse(f).l4_offset, 0u);
}

TEST(FrameParse, Ipv6Udp) {
  Bytes f = ethernet(0x86DD);
  ipv6(f, 17, 8 + 5);
  udp(f, 5);
  const FrameInfo info = parse(f);
  EXPECT_EQ(info.l3, FrameInfo::L3::kIpv6);
  EXPECT_TRUE(info.ipv6_header_ok);
  EXPECT_FALSE(info.ipv4_header_ok);
  EXPECT_EQ(info.l3_len, 40u);
  EXPECT_EQ(info.l4_proto, 17);
  EXPECT_EQ(info.l4_offset, 54u);
  EXPECT_EQ(info.l4_len, 13u);
}

TEST(FrameParse, Ipv6ExtensionHeadersWalked) {
  Bytes f = ethernet(0x86DD, 7);
  const uint32_t ext = 8 + 24 + 16;
  ipv6(f, 0, ext + 20);
  ipv6_ext(f, 43, 0);  // hop-by-hop, 8 bytes
  ipv6_ext(f, 60, 2);  // routing, 24 bytes
  ipv6_ext(f, 6, 1);   // destination options, 16 bytes
  tcp(f, 5, 0);
  const FrameInfo info = parse(f);
  EXPECT_TRUE(info.vlan);
  EXPECT_TRUE(info.ipv6_header_ok);
  EXPECT_FALSE(info.fragment);
  EXPECT_EQ(info.l3_len, 40u + ext);
  EXPECT_EQ(info.l4_proto, 6);
  EXPECT_EQ(info.l4_offset, 18u + 40u + ext);
  EXPECT_EQ(info.l4_len, 20u);
  EXPECT_EQ(info.l4_header_len, 20u);
}

TEST(FrameParse, Ipv6Fragments) {
  for (auto [offset, more] : {std::pair<uint16_t, bool>{0, true}, {100, false}, {5, true}}) {
    Bytes f = ethernet(0x86DD);
    ipv6(f, 0, 8 + 8 + 8 + 16);
    ipv6_ext(f, 44, 0);
    ipv6_fragment(f, 17, offset, more);
    udp(f, 16);
    const FrameInfo info = parse(f);
    EXPECT_TRUE(info.fragment);
    EXPECT_TRUE(info.ipv6_header_ok);
    EXPECT_EQ(info.l3_len, 56u);
    EXPECT_EQ(info.l4_proto, 17);
    EXPECT_EQ(info.l4_offset, 0u);
  }
}

TEST(FrameParse, Ipv6BadHeaders) {
  Bytes f = ethernet(0x86DD);
  ipv6(f, 17, 8);
  udp(f, 0);
  Bytes payload_past_frame = f;
  set16(payload_past_frame, 18, 9);
  EXPECT_FALSE(parse(payload_past_frame).ipv6_header_ok);

  Bytes bad_version = f;
  bad_version[14] = 0x40;
  EXPECT_FALSE(parse(bad_version).ipv6_header_ok);
  EXPECT_EQ(parse(bad_version).l3, FrameInfo::L3::kNone);

  // An extension header longer than the payload cannot be walked.
  Bytes ext_too_long = ethernet(0x86DD);
  ipv6(ext_too_long, 60, 16);
  ipv6_ext(ext_too_long, 17, 2);  // claims 24 bytes
  ext_too_long.erase(ext_too_long.end() - 8, ext_too_long.end());
  const FrameInfo info = parse(ext_too_long);
  EXPECT_FALSE(info.ipv6_header_ok);
  EXPECT_EQ(info.l4_offset, 0u);
  EXPECT_EQ(info.l3_len, 40u);
}

TEST(FrameParse, Ipv6ExtensionChainIsBounded) {
  Bytes f = ethernet(0x86DD);
  const unsigned count = 20;
  ipv6(f, 60, count * 8 + 8);
  for (unsigned i = 0; i < count; ++i) ipv6_ext(f, i + 1 == count ? 17 : 60, 0);
  udp(f, 0);
  const FrameInfo info = parse(f);
  EXPECT_FALSE(info.ipv6_header_ok);
  EXPECT_EQ(info.l4_offset, 0u);
}

uint32_t fixed_header_len(FrameInfo::L3 l3) {
  return l3 == FrameInfo::L3::kIpv4 ? 20 : l3 == FrameInfo::L3::kIpv6 ? 40 : 0;
}

// Every prefix of every frame parses without reading past the end, and a prefix that cuts the
// L4 header never reports one.
TEST(FrameParse, EveryTruncationStaysInBounds) {
  std::vector<Bytes> frames;
  Bytes f = ethernet(0x0800, 1);
  ipv4(f, 6, 24 + 10, 2);
  tcp(f, 6, 10);
  frames.push_back(f);
  f = ethernet(0x86DD);
  ipv6(f, 0, 8 + 8 + 8);
  ipv6_ext(f, 60, 0);
  ipv6_ext(f, 17, 0);
  udp(f, 0);
  frames.push_back(f);
  f = ethernet(0x86DD, 2);
  ipv6(f, 44, 8 + 8);
  ipv6_fragment(f, 6, 0, true);
  fill(f, 8, 0);
  frames.push_back(f);

  GuardedFrame guarded;
  for (const Bytes& frame : frames) {
    FrameInfo full;
    ASSERT_TRUE(guarded.parse(frame.data(), static_cast<uint32_t>(frame.size()), &full));
    for (uint32_t len = 0; len < frame.size(); ++len) {
      FrameInfo info;
      const bool ok = guarded.parse(frame.data(), len, &info);
      EXPECT_EQ(ok, len >= 14);
      EXPECT_EQ(info.len, len);
      // A truncated frame is never structurally valid IP (the IP lengths claim the full frame).
      EXPECT_FALSE(info.ipv4_header_ok || info.ipv6_header_ok) << len;
      EXPECT_EQ(info.l4_offset, 0u) << len;
      // The IP version is reported exactly when its fixed header (the addresses) is readable.
      const FrameInfo::L3 expected =
          len >= full.l3_offset + fixed_header_len(full.l3) ? full.l3 : FrameInfo::L3::kNone;
      EXPECT_EQ(info.l3, expected) << len;
    }
  }
}

}  // namespace
