// SPDX-License-Identifier: BSD-3-Clause
// The pseudo-header seed of TX L4 checksum offload (doc/hardware.md §4.10): the NIC completes the
// checksum from the sum the driver leaves in the TCP/UDP checksum field, as with Linux's
// CHECKSUM_PARTIAL. Shared by tx_prepare (which seeds) and the TX burst (which seeds only where
// that is safe, for applications that do not call rte_eth_tx_prepare).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "tx_oob.h"

namespace mana {

enum class SeedResult : uint8_t {
  kDone,          // the field holds the seed (or no L4 checksum was asked for)
  kHeadersSplit,  // the checksum field is not in the first segment
  kReadOnlyMbuf,  // the field needs the seed but the data is shared (refcnt > 1, indirect, extbuf)
};

// Data another mbuf may also see must not be written (a clone's or an attached buffer's).
inline bool mbuf_data_writable(const rte_mbuf* m) {
  return RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1;
}

// Where the L4 checksum field is, from the start of the frame.
inline uint32_t l4_checksum_field(const rte_mbuf* m, bool tcp) {
  return m->l2_len + m->l3_len +
         (tcp ? offsetof(rte_tcp_hdr, cksum) : offsetof(rte_udp_hdr, dgram_cksum));
}

// A one's complement sum of 32-bit words, folded to 16 bits. The words are read as they lie in
// memory, so the result is in memory order too, like rte_raw_cksum's (the one's complement sum
// does not depend on byte order): equal to rte_raw_cksum over the same bytes.
inline uint16_t fold_csum(uint64_t sum) {
  uint32_t s32;
  const bool carry =
      __builtin_add_overflow(static_cast<uint32_t>(sum), static_cast<uint32_t>(sum >> 32), &s32);
  s32 += carry;  // `sum` < 2^63: no second carry
  // The high half of s32 + (s32 rotated by 16) is the sum of both halves with the end carry.
  return static_cast<uint16_t>((s32 + ((s32 << 16) | (s32 >> 16))) >> 16);
}

inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// rte_ipv4_phdr_cksum without TSO, in a few adds: addresses, protocol and the L4 length (total
// length minus the IHL's header length, which a packet's total length covers), as memory-order
// words. A byte swap multiplies a 16-bit
// word by 256 modulo 0xFFFF, so the length's swap is the total length's raw word minus the
// header length times 256 (plus 0xFFFF, a one's complement zero, to stay positive: so an all-zero
// pseudo-header gives 0xFFFF where rte_ipv4_phdr_cksum gives 0, the same one's complement zero).
inline uint16_t ipv4_phdr_seed(const uint8_t* ip) {
  uint64_t addrs;
  std::memcpy(&addrs, ip + offsetof(rte_ipv4_hdr, src_addr), sizeof(addrs));
  uint16_t total_raw;
  std::memcpy(&total_raw, ip + offsetof(rte_ipv4_hdr, total_length), sizeof(total_raw));
  const uint64_t header_len = (ip[0] & RTE_IPV4_HDR_IHL_MASK) * RTE_IPV4_IHL_MULTIPLIER;
  const uint64_t proto = ip[offsetof(rte_ipv4_hdr, next_proto_id)];
  const uint64_t sum =
      (addrs & 0xFFFFFFFF) + (addrs >> 32) + total_raw + 0xFFFF + (proto << 8) - (header_len << 8);
  return fold_csum(sum);
}

// rte_ipv6_phdr_cksum without TSO: both addresses, the payload length and the next header.
inline uint16_t ipv6_phdr_seed(const uint8_t* ip) {
  uint64_t sum = 0;
  for (size_t i = offsetof(rte_ipv6_hdr, src_addr); i < sizeof(rte_ipv6_hdr); i += 4)
    sum += load32(ip + i);
  uint16_t payload_be;
  std::memcpy(&payload_be, ip + offsetof(rte_ipv6_hdr, payload_len), sizeof(payload_be));
  sum += payload_be;
  sum += rte_cpu_to_be_16(uint16_t{ip[offsetof(rte_ipv6_hdr, proto)]});
  return fold_csum(sum);
}

// The seed for `m` (IPv4 or IPv6 as its flags say; TSO is refused before any seed is computed).
inline uint16_t phdr_seed(const rte_mbuf* m, uint64_t ol_flags) {
  const uint8_t* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
  return (ol_flags & RTE_MBUF_F_TX_IPV4) ? ipv4_phdr_seed(ip) : ipv6_phdr_seed(ip);
}

// Writes the pseudo-header sum into the L4 checksum field when it is not already there. The IP
// header precedes the field, so it is in the first segment whenever the field is.
inline SeedResult seed_l4_checksum(rte_mbuf* m) {
  const uint64_t f = m->ol_flags;
  const uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
  const bool tcp = l4 == RTE_MBUF_F_TX_TCP_CKSUM;
  if (!tcp && l4 != RTE_MBUF_F_TX_UDP_CKSUM) return SeedResult::kDone;
  const uint32_t field = l4_checksum_field(m, tcp);
  if (field + sizeof(uint16_t) > m->data_len) return SeedResult::kHeadersSplit;
  // No IP version: tx_prepare refuses it, the burst sends it as is.
  if (!(f & (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6))) return SeedResult::kDone;
  const uint16_t sum = phdr_seed(m, f);
  // Byte copies: header lengths may put the field at an odd address.
  auto* p = rte_pktmbuf_mtod_offset(m, uint8_t*, field);
  uint16_t now;
  std::memcpy(&now, p, sizeof(now));
  if (now == sum) return SeedResult::kDone;
  if (!mbuf_data_writable(m)) return SeedResult::kReadOnlyMbuf;
  std::memcpy(p, &sum, sizeof(sum));
  return SeedResult::kDone;
}

// What the common-case seed needs of a checksum request, by the five flag bits of tx_oob.h: the
// shortest IP header (above any l3_len for a request it does not take, so that its length test
// refuses those too), where the L4 checksum field ends within the L4 header, the IP version.
struct SeedCase {
  uint8_t ipv4 = 0;
  uint8_t field_end = 0;
  uint16_t min_l3 = 1u << RTE_MBUF_L3_LEN_BITS;
};
constexpr SeedCase seed_case_of(uint64_t f) {
  const uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
  const bool v4 = f & RTE_MBUF_F_TX_IPV4, v6 = f & RTE_MBUF_F_TX_IPV6;
  const bool ip_csum = f & RTE_MBUF_F_TX_IP_CKSUM;
  const bool tcp = l4 == RTE_MBUF_F_TX_TCP_CKSUM;
  SeedCase c;
  if (v4 == v6 || (ip_csum && !v4) || !(tcp || l4 == RTE_MBUF_F_TX_UDP_CKSUM)) return c;
  c.ipv4 = v4;
  c.min_l3 = v4 ? sizeof(rte_ipv4_hdr) : sizeof(rte_ipv6_hdr);
  c.field_end =
      (tcp ? offsetof(rte_tcp_hdr, cksum) : offsetof(rte_udp_hdr, dgram_cksum)) + sizeof(uint16_t);
  return c;
}
[[gnu::visibility("hidden")]] inline constexpr auto kSeedCases = tx_csum_flags_table(seed_case_of);
static_assert(sizeof(SeedCase) == sizeof(uint32_t));

// The offloads a net_mana queue can be asked for; any other flag of RTE_MBUF_F_TX_OFFLOAD_MASK is
// refused (TSO is taken apart, before any seed).
inline constexpr uint64_t kSupportedTxFlags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 |
                                              RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK |
                                              RTE_MBUF_F_TX_VLAN;
inline constexpr uint64_t kRefusedTxFlags = RTE_MBUF_F_TX_OFFLOAD_MASK & ~kSupportedTxFlags;
// Outside the common case: a refused offload flag, data other mbufs may see (a clone's, an
// attached buffer's).
inline constexpr uint64_t kSeedUncommonFlags =
    kRefusedTxFlags | RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL;

// The common case's seed, written without reading the field: a direct, unshared, one-segment mbuf
// asking for a UDP or TCP checksum over IPv4 or IPv6, with plausible header lengths and the field
// in its data, and `more_rules` (the caller's own, each difference negative when broken) kept.
// The length rules are one sign test. False: not the common case, nothing written; the caller
// takes every rule (seed_l4_checksum). Used by tx_prepare and by the burst on packets tx_prepare
// did not see.
[[gnu::always_inline]] inline bool seed_common_case(rte_mbuf* m, uint64_t f, uint32_t more_rules) {
  const SeedCase c = kSeedCases[(f >> kTxCsumFlagsShift) & 0x1F];
  uint32_t refcnt_segs;
  static_assert(offsetof(rte_mbuf, nb_segs) == offsetof(rte_mbuf, refcnt) + sizeof(uint16_t));
  std::memcpy(&refcnt_segs, &m->refcnt, sizeof(refcnt_segs));
  constexpr uint32_t kOneSegUnshared = 1u | 1u << 16;  // little endian: refcnt 1, nb_segs 1
  // l2_len and l3_len: the lowest bit-fields of the tx_offload word (little endian).
  const auto lens = static_cast<uint32_t>(m->tx_offload);
  const uint32_t l2 = lens & RTE_LEN2MASK(RTE_MBUF_L2_LEN_BITS, uint32_t);
  const uint32_t l3 = (lens >> RTE_MBUF_L2_LEN_BITS) & RTE_LEN2MASK(RTE_MBUF_L3_LEN_BITS, uint32_t);
  const uint32_t end = l2 + l3 + c.field_end;
  // Unsigned: a broken rule wraps its (small) difference, which sets the top bit.
  const auto short_by = static_cast<int32_t>((l2 - sizeof(rte_ether_hdr)) | (l3 - c.min_l3) |
                                             (uint32_t{m->data_len} - end) | more_rules);
  if (((f & kSeedUncommonFlags) | (refcnt_segs ^ kOneSegUnshared)) != 0 || short_by < 0)
    return false;
  const uint8_t* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, l2);
  const uint16_t seed = c.ipv4 ? ipv4_phdr_seed(ip) : ipv6_phdr_seed(ip);
  std::memcpy(rte_pktmbuf_mtod_offset(m, uint8_t*, end - sizeof(uint16_t)), &seed, sizeof(seed));
  return true;
}

}  // namespace mana
