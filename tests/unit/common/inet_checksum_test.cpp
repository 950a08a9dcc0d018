// SPDX-License-Identifier: BSD-3-Clause
// Internet checksums against RFC 1071's worked example, a real IPv4 header, DPDK's independent
// implementations (rte_ip.h), and the receiver's property that a checksummed header sums to 0xFFFF.
#include "mana/inet_checksum.h"

#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <rte_ip.h>
#include <rte_udp.h>

namespace {

using mana::csum_add;
using mana::csum_finish;

TEST(InetChecksum, Rfc1071Example) {
  // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to 2ddf0, folded ddf2, checksum 220d.
  const uint8_t data[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(csum_add(0, data, sizeof data), 0xddf2u);
  EXPECT_EQ(csum_finish(csum_add(0, data, sizeof data)), 0x220d);
  // Byte order independence (RFC 1071 §2(B)) lets the sum be split at any even offset.
  EXPECT_EQ(csum_finish(csum_add(csum_add(0, data, 2), data + 2, 6)), 0x220d);
  EXPECT_EQ(csum_finish(csum_add(0, data, 6) + csum_add(0, data + 6, 2)), 0x220d);
}

TEST(InetChecksum, OddLengthPadsWithZero) {
  const uint8_t data[3] = {0x12, 0x34, 0x56};
  EXPECT_EQ(csum_add(0, data, 3), 0x1234u + 0x5600u);
  const uint8_t one[1] = {0xAB};
  EXPECT_EQ(csum_add(0, one, 1), 0xAB00u);
}

TEST(InetChecksum, EndAroundCarry) {
  const uint8_t data[4] = {0xFF, 0xFF, 0x00, 0x02};
  EXPECT_EQ(csum_add(0, data, 4), 0x0002u);  // 0xFFFF + 2 = 0x10001 -> 0x0002
  EXPECT_EQ(csum_finish(0x1FFFE), 0x0000);   // folds to 0xFFFF, complement 0
}

// A real IPv4 header (UDP, 192.168.0.1 -> 192.168.0.199) whose checksum is 0xb861.
const uint8_t kRealIpv4Header[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                     0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

TEST(InetChecksum, RealIpv4Header) {
  EXPECT_EQ(mana::ipv4_header_checksum(kRealIpv4Header, 20), 0xb861);
  // The field's current value is ignored.
  uint8_t zeroed[20];
  std::memcpy(zeroed, kRealIpv4Header, 20);
  zeroed[10] = zeroed[11] = 0x5A;
  EXPECT_EQ(mana::ipv4_header_checksum(zeroed, 20), 0xb861);
  // A receiver sums the whole header including the checksum: all ones.
  EXPECT_EQ(csum_add(0, kRealIpv4Header, 20), 0xFFFFu);
}

TEST(InetChecksum, RandomHeadersVerifyToAllOnesAndMatchDpdk) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 200; ++round) {
    const unsigned ihl = 5 + round % 11;
    alignas(4) uint8_t header[60] = {};
    for (unsigned i = 0; i < ihl * 4; ++i) header[i] = static_cast<uint8_t>(rng());
    header[0] = static_cast<uint8_t>(0x40 | ihl);
    const uint16_t csum = mana::ipv4_header_checksum(header, ihl * 4);
    header[10] = static_cast<uint8_t>(csum >> 8);
    header[11] = static_cast<uint8_t>(csum);
    ASSERT_EQ(csum_add(0, header, ihl * 4), 0xFFFFu) << "round " << round;
    // DPDK's rte_ipv4_cksum wants the field zeroed and returns the value as stored in memory.
    alignas(4) uint8_t zeroed[60];
    std::memcpy(zeroed, header, sizeof zeroed);
    zeroed[10] = zeroed[11] = 0;
    const uint16_t dpdk = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(zeroed));
    ASSERT_EQ(dpdk, rte_cpu_to_be_16(csum)) << "round " << round;
  }
}

// Builds IPv4/UDP and IPv6/UDP packets with random payloads and checks the full L4 checksum
// (pseudo-header + header + payload) against DPDK's rte_ipv4/6_udptcp_cksum.
TEST(InetChecksum, PseudoHeaderSumsMatchDpdk) {
  std::mt19937 rng(777);
  for (int round = 0; round < 100; ++round) {
    const uint32_t payload = rng() % 300;
    const uint32_t l4_len = sizeof(rte_udp_hdr) + payload;
    for (bool v6 : {false, true}) {
      const uint32_t ip_len = v6 ? 40 : 20;
      std::vector<uint8_t> pkt(ip_len + l4_len);
      for (auto& b : pkt) b = static_cast<uint8_t>(rng());
      if (v6) {
        pkt[0] = 0x60;
        pkt[4] = static_cast<uint8_t>(l4_len >> 8);
        pkt[5] = static_cast<uint8_t>(l4_len);
        pkt[6] = 17;
      } else {
        pkt[0] = 0x45;
        pkt[2] = static_cast<uint8_t>((ip_len + l4_len) >> 8);
        pkt[3] = static_cast<uint8_t>(ip_len + l4_len);
        pkt[9] = 17;
      }
      uint8_t* l4 = pkt.data() + ip_len;
      l4[4] = static_cast<uint8_t>(l4_len >> 8);
      l4[5] = static_cast<uint8_t>(l4_len);
      l4[6] = l4[7] = 0;
      const uint32_t pseudo = v6 ? mana::ipv6_pseudo_sum(pkt.data(), 17, l4_len)
                                 : mana::ipv4_pseudo_sum(pkt.data(), 17, l4_len);
      const uint16_t ours = csum_finish(csum_add(pseudo, l4, l4_len));
      uint16_t dpdk = v6 ? rte_ipv6_udptcp_cksum(reinterpret_cast<rte_ipv6_hdr*>(pkt.data()), l4)
                         : rte_ipv4_udptcp_cksum(reinterpret_cast<rte_ipv4_hdr*>(pkt.data()), l4);
      dpdk = rte_be_to_cpu_16(dpdk);
      // DPDK maps a computed 0 to 0xFFFF (the UDP rule); compare the one's-complement values.
      if (dpdk == 0xFFFF && ours == 0) dpdk = 0;
      ASSERT_EQ(ours, dpdk) << "round " << round << " v6=" << v6;
      // Pseudo-header seeds as DPDK computes them (non-inverted, doc/hardware.md §4.10).
      const uint16_t dpdk_phdr = rte_be_to_cpu_16(
          v6 ? rte_ipv6_phdr_cksum(reinterpret_cast<rte_ipv6_hdr*>(pkt.data()), 0)
             : rte_ipv4_phdr_cksum(reinterpret_cast<rte_ipv4_hdr*>(pkt.data()), 0));
      ASSERT_EQ(pseudo == 0 ? 0xFFFFu : pseudo, dpdk_phdr == 0 ? 0xFFFFu : dpdk_phdr);
    }
  }
}

}  // namespace
