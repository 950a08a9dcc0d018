// SPDX-License-Identifier: BSD-3-Clause
// TX of a TSO WQE (doc/hardware.md §4.11, doc/emulator.md "TSO"): the WQE form mana_start_xmit
// uses for GSO packets is checked, the packet gathered and sent as MSS-sized frames (tso.h). A
// frame the wire asks to retry resumes there on the next pass.
#include <cstring>

#include "device/cq_producer.h"
#include "device/device_impl.h"
#include "device/wire_io.h"
#include "device/tso.h"

namespace mana::emu {

CqeStatus DeviceImpl::send_tso(Sq& sq, const WqeView& w, const hw::TxOob& oob, bool long_oob,
                               const hw::Sge* sges) {
  using S = hw::TxShortOob;
  using H = hw::WqeHeader;
  Port& port = *sq.port;
  // The headers alone in SGE 0 whose size last_vbytes repeats, client_oob_in_sgl, a TCP checksum
  // request and one IP version.
  TsoRequest r;
  r.header_len = H::LastVbytes::get(w.header.dw0);
  r.mss = H::ClientDataUnit::get(w.header.dw1);
  r.transport_offset = S::TransportOffset::get(oob.s.dw1);
  r.is_ipv4 = S::IsIpv4::get(oob.s.dw0) != 0;
  r.fixed_ip_id = config_.hw.tso_fixed_ip_id;
  if (!H::ClientOobInSgl::get(w.header.dw1) || w.num_sge < 2 || r.header_len != sges[0].size ||
      !S::TcpCsum::get(oob.s.dw0) || r.is_ipv4 == (S::IsIpv6::get(oob.s.dw0) != 0))
    return {hw::kCqeTxInvalidOob};
  const uint64_t total = sgl_bytes(sges, w.num_sge);
  if (total > kMaxTsoPacket) return {hw::kCqeTxMtuDrop};
  if (tso_packet_.size() < kMaxTsoPacket) tso_packet_.resize(kMaxTsoPacket);
  uint8_t* pkt = tso_packet_.data();
  for (uint32_t i = 0, at = 0; i < w.num_sge; at += sges[i].size, ++i)
    std::memcpy(pkt + at, reinterpret_cast<const void*>(sges[i].address), sges[i].size);
  const uint32_t len = static_cast<uint32_t>(total);
  if (!tso_headers_ok(pkt, len, r)) return {hw::kCqeTxHdrProcessingError};
  if (config_.anti_spoof && !same_mac(pkt + 6, port.mac)) return {hw::kCqeTxSaDrop};
  const bool inject_vlan = long_oob && hw::TxLongOob::InjectVlan::get(oob.l.dw2);
  if (inject_vlan && has_vlan_tag(pkt)) return {hw::kCqeTxVlanTaggingViolation};
  // Every frame must fit the MTU, not the packet.
  const uint32_t mtu_frame = port_mtu(port) + kEthHeaderLen + (has_vlan_tag(pkt) ? kVlanTagLen : 0);
  if (tso_max_segment_len(len, r) > mtu_frame) return {hw::kCqeTxMtuDrop};
  const uint32_t count = tso_segment_count(len, r);
  for (uint32_t i = sq.tso_sent; i < count; ++i) {
    uint8_t* frame = tx_frame_.data();
    uint32_t n = tso_build_segment(pkt, len, r, i, frame);
    if (inject_vlan) n = insert_vlan_tag(frame, n, tx_vlan_tci(oob.l));
    if (wire_transmit(port, frame, n)) {
      ++port.counters.tx_frames;
    } else if (port.wire->retry_later()) {
      sq.tso_sent = i;
      return {kTxRetryLater};
    } else {
      ++port.counters.tx_wire_drops;
    }
    ++sq.counters.packets;
    sq.counters.bytes += n;
  }
  sq.tso_sent = 0;
  return {hw::kCqeTxOkay};
}

}  // namespace mana::emu
