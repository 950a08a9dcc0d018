// SPDX-License-Identifier: BSD-3-Clause
// The TX client OOB (doc/hardware.md §4.3) built from an mbuf's offload request. Every field is
// written (no stale bits, doc/hardware.md §6.3 item 2); the per-queue constant part is computed
// once at queue start.
#pragma once

#include <array>
#include <cstdint>

#include <rte_mbuf_core.h>

#include "mana/gdma_format.h"

namespace mana {

// The words of the OOB that depend only on the queue: CQ id, SQ frame number, vPort offset, and
// with it the OOB format. An offset above 255 does not fit the short OOB's 8 bits: like the Linux
// driver (mana_start_xmit) the queue then sends every WQE with the long OOB and its 12-bit
// long_vport_offset, leaving the short field 0 (doc/hardware.md §4.3). Decided once at queue start.
struct TxOobTemplate {
  uint32_t dw0 = 0;
  uint32_t dw1 = 0;
  uint32_t long_dw3 = 0;                  // long OOB word 3 (long_vport_offset)
  uint32_t oob_size = hw::kShortOobSize;  // of every WQE that needs no VLAN tag
};

inline constexpr uint32_t kMaxShortVportOffset = hw::TxShortOob::VportOffset::kMask;
inline constexpr uint32_t kMaxVportOffset = hw::TxLongOob::LongVportOffset::kMask;

inline TxOobTemplate make_tx_oob_template(uint32_t cq_id, uint32_t sq_id, uint32_t vp_offset) {
  using S = hw::TxShortOob;
  TxOobTemplate t;
  t.dw0 = S::VcqNumber::set(0, cq_id);
  t.dw1 = S::VsqFrame::set(0, hw::vsq_frame_of(sq_id));
  if (vp_offset > kMaxShortVportOffset) {
    t.dw0 = S::Format::set(t.dw0, static_cast<uint32_t>(hw::PacketFormat::kLong));
    t.long_dw3 = hw::TxLongOob::LongVportOffset::set(0, vp_offset);
    t.oob_size = hw::kLongOobSize;
  } else {
    t.dw1 = S::VportOffset::set(t.dw1, vp_offset);
  }
  return t;
}

// The checksum bits of short-OOB word 0 for offload flags `ol_flags`, as the Linux driver's
// mana_start_xmit sets them (doc/hardware.md §4.3, §4.10): the IPv4/IPv6 bit accompanies every
// checksum request.
constexpr uint32_t tx_csum_dw0(uint64_t ol_flags) {
  using S = hw::TxShortOob;
  const uint64_t l4 = ol_flags & RTE_MBUF_F_TX_L4_MASK;
  const bool tcp = l4 == RTE_MBUF_F_TX_TCP_CKSUM;
  const bool udp = l4 == RTE_MBUF_F_TX_UDP_CKSUM;
  const bool ip_csum = ol_flags & RTE_MBUF_F_TX_IP_CKSUM;
  uint32_t dw0 = 0;
  if (!(tcp || udp || ip_csum)) return dw0;
  if (ol_flags & RTE_MBUF_F_TX_IPV4) dw0 = S::IsIpv4::set(dw0, 1);
  if (ol_flags & RTE_MBUF_F_TX_IPV6) dw0 = S::IsIpv6::set(dw0, 1);
  if (ip_csum) dw0 = S::IpCsum::set(dw0, 1);
  if (tcp) dw0 = S::TcpCsum::set(dw0, 1);
  if (udp) dw0 = S::UdpCsum::set(dw0, 1);
  return dw0;
}

// The same, looked up: the five flags it depends on are adjacent bits of ol_flags.
inline constexpr unsigned kTxCsumFlagsShift = 52;
static_assert(((RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_IPV4 |
                RTE_MBUF_F_TX_IPV6) >>
               kTxCsumFlagsShift) == 0x1F);
// A table of `f` over every combination of those five bits, indexed by them.
template <class F>
constexpr auto tx_csum_flags_table(F f) {
  std::array<decltype(f(0)), 32> t{};
  for (uint64_t i = 0; i < t.size(); i++) t[i] = f(i << kTxCsumFlagsShift);
  return t;
}
// Hidden: the burst reads it RIP-relative, not through the GOT of a shared object.
[[gnu::visibility("hidden")]] inline constexpr auto kTxCsumDw0 = tx_csum_flags_table(tx_csum_dw0);
inline uint32_t tx_csum_dw0_fast(uint64_t ol_flags) {
  return kTxCsumDw0[(ol_flags >> kTxCsumFlagsShift) & 0x1F];
}

// The short OOB words (word 1 high, word 0 low) of the queue's CQE-suppressed one-SGE WQEs, with
// the checksum bits of each combination of the five flags: what the burst writes for a checksum
// packet is one load, indexed by its flags (plus the TCP transport offset). Built at queue start.
using TxCsumOobWords = std::array<uint64_t, 32>;
inline TxCsumOobWords make_tx_csum_oob_words(const TxOobTemplate& t) {
  const uint64_t base = (uint64_t{t.dw1} << 32) | hw::TxShortOob::SuppressCqe::set(t.dw0, 1);
  TxCsumOobWords words{};
  for (size_t i = 0; i < words.size(); i++) words[i] = base | kTxCsumDw0[i];
  return words;
}

// l2_len + l3_len, the TCP transport offset, from one load of the tx_offload word (its lowest
// bit-fields, little endian).
inline uint32_t tx_l2_l3_len(const rte_mbuf* m) {
  const auto lens = static_cast<uint32_t>(m->tx_offload);
  return (lens & RTE_LEN2MASK(RTE_MBUF_L2_LEN_BITS, uint32_t)) +
         ((lens >> RTE_MBUF_L2_LEN_BITS) & RTE_LEN2MASK(RTE_MBUF_L3_LEN_BITS, uint32_t));
}

// Fills the short OOB for a packet with offload flags `ol_flags` and header lengths: the checksum
// bits, and the transport offset for the TCP checksum only (the NIC parses UDP itself).
inline hw::TxShortOob make_tx_short_oob(const TxOobTemplate& t, uint64_t ol_flags, uint32_t l2_len,
                                        uint32_t l3_len) {
  uint32_t dw1 = t.dw1;
  if ((ol_flags & RTE_MBUF_F_TX_L4_MASK) == RTE_MBUF_F_TX_TCP_CKSUM)
    dw1 = hw::TxShortOob::TransportOffset::set(dw1, l2_len + l3_len);
  return {t.dw0 | tx_csum_dw0_fast(ol_flags), dw1};
}

// Word 2 of the long OOB part: insert an 802.1Q tag with `tci` (PCP, DEI, VID).
inline uint32_t make_tx_vlan_dw2(uint16_t tci) {
  using L = hw::TxLongOob;
  uint32_t dw2 = L::InjectVlan::set(0, 1);
  dw2 = L::Pcp::set(dw2, tci >> 13);
  dw2 = L::Dei::set(dw2, (tci >> 12) & 1);
  return L::Vid::set(dw2, tci & 0xFFF);
}

inline void set_tx_suppress(hw::TxShortOob& oob, bool suppress) {
  oob.dw0 = hw::TxShortOob::SuppressCqe::set(oob.dw0, suppress);
}
inline void set_tx_long_format(hw::TxShortOob& oob) {
  oob.dw0 = hw::TxShortOob::Format::set(oob.dw0, static_cast<uint32_t>(hw::PacketFormat::kLong));
}

}  // namespace mana
