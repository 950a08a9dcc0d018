// The TX client OOB (spec §4.3) built from an mbuf's offload request. Every field is written (no
// stale bits, spec §6.3 item 2); the per-queue constant part is computed once at queue start.
#pragma once

#include <cstdint>

#include <rte_mbuf_core.h>

#include "mana/gdma_format.h"

namespace mana {

// The words of the OOB that depend only on the queue: CQ id, SQ frame number, vPort offset.
struct TxOobTemplate {
  uint32_t dw0 = 0;
  uint32_t dw1 = 0;
};

inline TxOobTemplate make_tx_oob_template(uint32_t cq_id, uint32_t sq_id, uint32_t vp_offset) {
  using S = hw::TxShortOob;
  return {S::VcqNumber::set(0, cq_id),
          S::VportOffset::set(S::VsqFrame::set(0, hw::vsq_frame_of(sq_id)), vp_offset)};
}

// Fills the short OOB for a packet with offload flags `ol_flags` and header lengths (used for the
// TCP transport offset, which the NIC needs for TCP checksum only).
inline hw::TxShortOob make_tx_short_oob(const TxOobTemplate& t, uint64_t ol_flags, uint32_t l2_len,
                                        uint32_t l3_len) {
  using S = hw::TxShortOob;
  uint32_t dw0 = t.dw0;
  uint32_t dw1 = t.dw1;
  if (ol_flags & RTE_MBUF_F_TX_IPV4) dw0 = S::IsIpv4::set(dw0, 1);
  if (ol_flags & RTE_MBUF_F_TX_IPV6) dw0 = S::IsIpv6::set(dw0, 1);
  if (ol_flags & RTE_MBUF_F_TX_IP_CKSUM) dw0 = S::IpCsum::set(dw0, 1);
  const uint64_t l4 = ol_flags & RTE_MBUF_F_TX_L4_MASK;
  if (l4 == RTE_MBUF_F_TX_TCP_CKSUM) {
    dw0 = S::TcpCsum::set(dw0, 1);
    dw1 = S::TransportOffset::set(dw1, l2_len + l3_len);
  } else if (l4 == RTE_MBUF_F_TX_UDP_CKSUM) {
    dw0 = S::UdpCsum::set(dw0, 1);
  }
  return {dw0, dw1};
}

// The long OOB part that inserts an 802.1Q tag with `tci` (PCP, DEI, VID).
inline hw::TxLongOob make_tx_vlan_oob(uint16_t tci) {
  using L = hw::TxLongOob;
  uint32_t dw2 = L::InjectVlan::set(0, 1);
  dw2 = L::Pcp::set(dw2, tci >> 13);
  dw2 = L::Dei::set(dw2, (tci >> 12) & 1);
  dw2 = L::Vid::set(dw2, tci & 0xFFF);
  return {dw2, 0, 0, 0};
}

inline void set_tx_suppress(hw::TxShortOob& oob, bool suppress) {
  oob.dw0 = hw::TxShortOob::SuppressCqe::set(oob.dw0, suppress);
}
inline void set_tx_long_format(hw::TxShortOob& oob) {
  oob.dw0 = hw::TxShortOob::Format::set(oob.dw0, static_cast<uint32_t>(hw::PacketFormat::kLong));
}

}  // namespace mana
