// SPDX-License-Identifier: BSD-3-Clause
// Internet (RFC 1071) one's-complement checksums, for the emulator's offloads and test checkers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana {

// Adds the 16-bit big-endian words of `data` to `sum` (an odd last byte is padded with a zero).
// The result is folded to 16 bits, so many sums can be added with `+` before csum_finish. Chain
// calls only at even offsets of the data.
uint32_t csum_add(uint32_t sum, const void* data, size_t len);
// Folds to 16 bits and complements: the value stored in a header (host order of the big-endian
// field).
uint16_t csum_finish(uint32_t sum);
// IPv4 header checksum with the checksum field taken as zero (`header_len` = IHL * 4).
uint16_t ipv4_header_checksum(const uint8_t* ip_header, size_t header_len);
// Pseudo-header sums (not complemented, folded to 16 bits) for TCP/UDP over IPv4/IPv6, from the
// addresses of the fixed IP header; `l4_len` in bytes (L4 header + payload).
uint32_t ipv4_pseudo_sum(const uint8_t* ip_header, uint8_t proto, uint32_t l4_len);
uint32_t ipv6_pseudo_sum(const uint8_t* ip_header, uint8_t proto, uint32_t l4_len);

}  // namespace mana
