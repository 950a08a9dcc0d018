// SPDX-License-Identifier: BSD-3-Clause
// Toeplitz hash against Microsoft's "Verifying the RSS Hash Calculation" vectors, and the default
// MANA key against DPDK's independent software implementation (rte_softrss).
#include "mana/toeplitz.h"

#include <arpa/inet.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>
#include <rte_thash.h>

namespace {

const uint8_t kMicrosoftKey[40] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct Vector {
  const char* src;
  uint16_t src_port;
  const char* dst;
  uint16_t dst_port;
  uint32_t ip_only;
  uint32_t with_tcp;
};

// The NDIS input: source address, destination address, source port, destination port (all in
// network byte order).
std::vector<uint8_t> ndis_input(int family, const Vector& v, bool with_ports) {
  const size_t addr_len = family == AF_INET ? 4 : 16;
  std::vector<uint8_t> in(2 * addr_len);
  EXPECT_EQ(inet_pton(family, v.src, in.data()), 1) << v.src;
  EXPECT_EQ(inet_pton(family, v.dst, in.data() + addr_len), 1) << v.dst;
  if (with_ports) {
    for (uint16_t port : {v.src_port, v.dst_port}) {
      in.push_back(static_cast<uint8_t>(port >> 8));
      in.push_back(static_cast<uint8_t>(port));
    }
  }
  return in;
}

uint32_t hash(const uint8_t* key, const std::vector<uint8_t>& in) {
  return mana::toeplitz_hash(key, 40, in.data(), in.size());
}

TEST(Toeplitz, MicrosoftIpv4Vectors) {
  const Vector vectors[] = {
      {"66.9.149.187", 2794, "161.142.100.80", 1766, 0x323e8fc2, 0x51ccc178},
      {"199.92.111.2", 14230, "65.69.140.83", 4739, 0xd718262a, 0xc626b0ea},
      {"24.19.198.95", 12898, "12.22.207.184", 38024, 0xd2d0a5de, 0x5c2b394a},
      {"38.27.205.30", 48228, "209.142.163.6", 2217, 0x82989176, 0xafc7327f},
      {"153.39.163.191", 44251, "202.188.127.2", 1303, 0x5d1809c5, 0x10e828a2},
  };
  for (const Vector& v : vectors) {
    EXPECT_EQ(hash(kMicrosoftKey, ndis_input(AF_INET, v, false)), v.ip_only) << v.src;
    EXPECT_EQ(hash(kMicrosoftKey, ndis_input(AF_INET, v, true)), v.with_tcp) << v.src;
  }
}

TEST(Toeplitz, MicrosoftIpv6Vectors) {
  const Vector vectors[] = {
      {"3ffe:2501:200:1fff::7", 2794, "3ffe:2501:200:3::1", 1766, 0x2cc18cd5, 0x40207d3d},
      {"3ffe:501:8::260:97ff:fe40:efab", 14230, "ff02::1", 4739, 0x0f0c461c, 0xdde51bbf},
      {"3ffe:1900:4545:3:200:f8ff:fe21:67cf", 44251, "fe80::200:f8ff:fe21:67cf", 38024, 0x4b61e985,
       0x02d1feef},
  };
  for (const Vector& v : vectors) {
    EXPECT_EQ(hash(kMicrosoftKey, ndis_input(AF_INET6, v, false)), v.ip_only) << v.src;
    EXPECT_EQ(hash(kMicrosoftKey, ndis_input(AF_INET6, v, true)), v.with_tcp) << v.src;
  }
}

TEST(Toeplitz, DefaultManaKeyIsTheSpecKey) {
  // doc/hardware.md §2.5, in order.
  const uint8_t spec_key[40] = {0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2,
                                0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9,
                                0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56,
                                0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a};
  EXPECT_EQ(std::memcmp(mana::kDefaultRssKey, spec_key, sizeof spec_key), 0);
}

// DPDK's rte_softrss takes the input as host-order 32-bit words; feed it the same bytes.
uint32_t dpdk_softrss(const uint8_t* key, const std::vector<uint8_t>& in) {
  std::vector<uint32_t> words(in.size() / 4);
  for (size_t i = 0; i < words.size(); ++i) {
    uint32_t be;
    std::memcpy(&be, in.data() + 4 * i, 4);
    words[i] = ntohl(be);
  }
  return rte_softrss(words.data(), static_cast<uint32_t>(words.size()), key);
}

TEST(Toeplitz, DefaultManaKeyAgreesWithDpdkSoftrss) {
  const Vector flows[] = {
      {"10.0.0.1", 1024, "10.0.0.2", 80, 0, 0},
      {"192.168.1.100", 65535, "172.16.5.4", 1, 0, 0},
      {"fd00::1", 4791, "fd00::2", 53, 0, 0},
  };
  for (const Vector& f : flows) {
    const int family = std::strchr(f.src, ':') ? AF_INET6 : AF_INET;
    for (bool ports : {false, true}) {
      const auto in = ndis_input(family, f, ports);
      const uint32_t ours = hash(mana::kDefaultRssKey, in);
      EXPECT_EQ(ours, dpdk_softrss(mana::kDefaultRssKey, in)) << f.src << " ports=" << ports;
      EXPECT_NE(ours, hash(kMicrosoftKey, in));  // the key is really used
    }
  }
}

TEST(Toeplitz, SingleBitsSelectKeyWindows) {
  // Input bit k set alone yields the 32 key bits starting at bit k.
  const uint8_t key[8] = {0x80, 0x00, 0x00, 0x01, 0xC0, 0x00, 0x00, 0x00};
  const uint8_t first_bit[1] = {0x80};
  EXPECT_EQ(mana::toeplitz_hash(key, sizeof key, first_bit, 1), 0x80000001u);
  const uint8_t last_bit[1] = {0x01};  // bit 7: key bits 7..38
  EXPECT_EQ(mana::toeplitz_hash(key, sizeof key, last_bit, 1), 0x000000E0u);
  const uint8_t none[4] = {0, 0, 0, 0};
  EXPECT_EQ(mana::toeplitz_hash(key, sizeof key, none, sizeof none), 0u);
}

}  // namespace
