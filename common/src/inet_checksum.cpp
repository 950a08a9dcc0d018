// SPDX-License-Identifier: BSD-3-Clause
// RFC 1071 one's-complement sums. Big-endian 32-bit words are added into a 64-bit accumulator and
// folded at the end: 2^16 = 1 (mod 0xFFFF), so wider words give the same one's-complement sum.
#include "mana/inet_checksum.h"

#include <cstring>

namespace mana {
namespace {

uint32_t fold16(uint64_t acc) {
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return static_cast<uint32_t>(acc);
}

uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_bswap32(v);
}

}  // namespace

uint32_t csum_add(uint32_t sum, const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t acc = sum;
  for (; len >= 4; len -= 4, p += 4) acc += load_be32(p);
  if (len >= 2) {
    acc += (uint32_t{p[0]} << 8) | p[1];
    len -= 2;
    p += 2;
  }
  if (len) acc += uint32_t{p[0]} << 8;  // an odd last byte is the high half of a zero-padded word
  // Returned folded to 16 bits so that callers may add many sums without overflowing 32 bits.
  return fold16(acc);
}

uint16_t csum_finish(uint32_t sum) { return static_cast<uint16_t>(~fold16(sum)); }

uint16_t ipv4_header_checksum(const uint8_t* ip_header, size_t header_len) {
  constexpr size_t kChecksumOffset = 10;
  if (header_len < kChecksumOffset + 2) return csum_finish(csum_add(0, ip_header, header_len));
  uint32_t sum = csum_add(0, ip_header, kChecksumOffset);
  sum = csum_add(sum, ip_header + kChecksumOffset + 2, header_len - kChecksumOffset - 2);
  return csum_finish(sum);
}

uint32_t ipv4_pseudo_sum(const uint8_t* ip_header, uint8_t proto, uint32_t l4_len) {
  constexpr size_t kAddressesOffset = 12, kAddressesLen = 8;
  const uint32_t sum = csum_add(0, ip_header + kAddressesOffset, kAddressesLen);
  return fold16(uint64_t{sum} + proto + (l4_len >> 16) + (l4_len & 0xFFFF));
}

uint32_t ipv6_pseudo_sum(const uint8_t* ip_header, uint8_t proto, uint32_t l4_len) {
  constexpr size_t kAddressesOffset = 8, kAddressesLen = 32;
  const uint32_t sum = csum_add(0, ip_header + kAddressesOffset, kAddressesLen);
  return fold16(uint64_t{sum} + proto + (l4_len >> 16) + (l4_len & 0xFFFF));
}

}  // namespace mana
