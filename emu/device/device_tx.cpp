// SPDX-License-Identifier: BSD-3-Clause
// TX data path: SQ WQEs up to the doorbell's tail -> checks of doc/hardware.md §6.4 -> gather ->
// offloads -> wire -> TX CQE (doc/hardware.md §4.5, §4.9). Memory is read only after its SGE was
// checked against a live MR.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "device/cq_producer.h"
#include "device/device_impl.h"
#include "device/wire_io.h"

namespace mana::emu {

namespace {

constexpr CqeStatus kTxOk{hw::kCqeTxOkay};
constexpr CqeStatus kInvalidOob{hw::kCqeTxInvalidOob};

}  // namespace

unsigned DeviceImpl::process_sq(Sq& sq, unsigned budget) {
  unsigned n = 0;
  // The port's cap (--tx-pps; shared with its synthetic NIC): which bucket is fixed at creation.
  TxRateCap& cap = sq.port->shared_cap != nullptr ? *sq.port->shared_cap : sq.port->rate_cap;
  // A CQ under the CQ doorbell rule's stall takes no CQE: the SQ stops, as at a full CQ.
  while (n < budget && sq.pending_bu() != 0 && cq_admits(*sq.cq, sq, 1)) {
    if (!cap.take()) break;  // over the cap: the WQE waits
    ++n;
    prefetch_ring_ahead(sq);
    WqeView w;
    if (!read_wqe(sq, &w)) {
      // The header claims more than the doorbell announced: fail the WQE and skip that work.
      w.size_bu = sq.pending_bu();
      sq.consumed_bu = sq.tail_bu;
      ++sq.counters.wqes;
      complete_tx(sq, w, kInvalidOob);
      break;
    }
    prefetch_first_buffer(sq, (w.offset_bu + w.size_bu) & kBuMask, false);
    uint32_t dw0 = 0;
    if (w.oob_bytes >= sizeof(dw0)) std::memcpy(&dw0, w.oob, sizeof(dw0));
    const CqeStatus r = check_and_send(sq, w);
    if (r.type == kTxRetryLater) {
      --n;  // no progress: lets an idle device thread nap
      break;
    }
    sq.consumed_bu = (sq.consumed_bu + w.size_bu) & kBuMask;
    ++sq.counters.wqes;
    // A suppressed WQE that succeeds produces no CQE; errors always do (doc/hardware.md §4.9).
    if (r.type != hw::kCqeTxOkay || !hw::TxShortOob::SuppressCqe::get(dw0)) complete_tx(sq, w, r);
  }
  return n;
}

// A NIC sends what was posted at line rate; the device thread may lag behind, and a flow-controlled
// wire (fabric) may be holding the SQ back. So that a stopping application loses none of the frames
// its driver accepted, they still go out: while the wire holds them back, for as long as the wire's
// own stall rule allows (fabric_wire.h), else (a full CQ, the rate cap) for 2 s without progress;
// this device's own ports keep receiving meanwhile. What is left is named on stderr.
void DeviceImpl::send_posted_wqes(Sq& sq) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kNoProgressLimit = std::chrono::seconds(2);
  constexpr auto kWireHoldLimit = std::chrono::seconds(15);  // past the fabric's 10 s
  drain_doorbells();
  if (poll_doorbells_.load(std::memory_order_relaxed)) sample_doorbell_pages();
  auto last_progress = Clock::now();
  while (!sq.dead && !sq.stalled && sq.pending_bu() != 0) {
    if (process_sq(sq, kTxBudget) != 0) {
      last_progress = Clock::now();
      continue;
    }
    const auto limit = sq.port->wire->retry_later() ? kWireHoldLimit : kNoProgressLimit;
    if (Clock::now() - last_progress >= limit) break;
    for (Port& port : ports_) receive_port(port, kRxBudget);
    std::this_thread::yield();
  }
  if (!sq.dead && !sq.stalled && sq.pending_bu() != 0)
    fprintf(stderr,
            "mana-emu: SQ %u destroyed with %u basic units of WQEs not sent: its %s made no "
            "progress\n",
            sq.id, sq.pending_bu(),
            sq.port->wire->retry_later() ? "wire held them back (a receiver that does not run)"
                                         : "CQ or rate cap");
}

[[gnu::always_inline]] inline CqeStatus DeviceImpl::check_and_send(Sq& sq, const WqeView& w) {
  using S = hw::TxShortOob;
  Port& port = *sq.port;
  PortFaults& faults = port.faults;
  if (faults.tx_error.take()) return {faults.tx_error.cqe_type};
  if (w.oob_bytes != hw::kShortOobSize && w.oob_bytes != hw::kLongOobSize) return kInvalidOob;
  hw::TxOob oob{};
  const bool long_oob = w.oob_bytes == hw::kLongOobSize;
  std::memcpy(&oob.s, w.oob, sizeof(oob.s));
  if (long_oob) std::memcpy(&oob.l, w.oob + sizeof(oob.s), sizeof(oob.l));
  if (S::Format::get(oob.s.dw0) !=
      static_cast<uint32_t>(long_oob ? hw::PacketFormat::kLong : hw::PacketFormat::kShort))
    return kInvalidOob;
  if (w.num_sge > config_.limits.max_send_sge || w.num_sge > hw::kMaxTxSge) return kInvalidOob;
  if (S::VcqNumber::get(oob.s.dw0) != sq.cq->id ||
      S::VsqFrame::get(oob.s.dw1) != hw::vsq_frame_of(sq.id))
    return kInvalidOob;
  // The long format's 12-bit offset when set (mana_start_xmit for offsets above 255), else the
  // short format's 8-bit one (doc/hardware.md §4.3).
  const uint32_t long_vp = long_oob ? hw::TxLongOob::LongVportOffset::get(oob.l.dw3) : 0;
  const uint32_t vp = long_vp != 0 ? long_vp : S::VportOffset::get(oob.s.dw1);
  if (vp != port.vp_offset) return {hw::kCqeTxVportIdxOutOfRange};

  hw::Sge sges[hw::kMaxTxSge];
  read_sgl(sq, w, sges, w.num_sge ? w.num_sge : 1);
  const bool keys_invalid = faults.tx_bad_lkey_count != 0;
  if (keys_invalid) --faults.tx_bad_lkey_count;
  uint64_t total = 0;
  switch (check_sgl(mr_table_, mr_cache_, sq.pd_id, sges, w.num_sge, false, keys_invalid, &total)) {
    case SglStatus::kOk:
      break;
    case SglStatus::kBadDummy:
      return kInvalidOob;
    default:
      return {hw::kCqeTxInvalidOob, hw::kVendorErrAddrRange};
  }

  // An MSS in client_data_unit: a TSO WQE (doc/hardware.md §4.11).
  if (hw::WqeHeader::ClientDataUnit::get(w.header.dw1) != 0)
    return send_tso(sq, w, oob, long_oob, sges);
  const uint32_t mtu_frame = port_mtu(port) + kEthHeaderLen;
  if (total > mtu_frame + kVlanTagLen) return {hw::kCqeTxMtuDrop};
  const bool inject_vlan = long_oob && hw::TxLongOob::InjectVlan::get(oob.l.dw2);
  const bool checksums =
      (S::IpCsum::get(oob.s.dw0) | S::TcpCsum::get(oob.s.dw0) | S::UdpCsum::get(oob.s.dw0)) != 0;
  const bool rewrite = inject_vlan || checksums;
  // A one-SGE frame the NIC does not rewrite goes to the wire straight from the driver's buffer;
  // otherwise it is gathered into the staging buffer (the driver's memory is never modified).
  const uint8_t* frame;
  uint32_t len = static_cast<uint32_t>(total);
  if (w.num_sge == 1 && !rewrite) {
    frame = reinterpret_cast<const uint8_t*>(sges[0].address);
  } else {
    uint8_t* staging = tx_frame_.data();
    for (uint32_t i = 0, at = 0; i < w.num_sge; at += sges[i].size, ++i)
      std::memcpy(staging + at, reinterpret_cast<const void*>(sges[i].address), sges[i].size);
    frame = staging;
  }
  if (len < kEthHeaderLen) return {hw::kCqeTxHdrProcessingError};
  if (config_.anti_spoof && !same_mac(frame + 6, port.mac)) return {hw::kCqeTxSaDrop};
  // Open (doc/hardware.md §9.23): a second tag refused, or inserted outside the first.
  if (inject_vlan && config_.hw.tx_vlan_refuse_tagged && has_vlan_tag(frame))
    return {hw::kCqeTxVlanTaggingViolation};
  if (checksums) {
    // Where the OOB says, on the frame as the driver built it (before a tag is inserted).
    TxChecksumRequest csum;
    csum.ipv4_header = S::IpCsum::get(oob.s.dw0) != 0;
    csum.tcp = S::TcpCsum::get(oob.s.dw0) != 0;
    csum.udp = S::UdpCsum::get(oob.s.dw0) != 0;
    csum.is_ipv4 = S::IsIpv4::get(oob.s.dw0) != 0;
    csum.is_ipv6 = S::IsIpv6::get(oob.s.dw0) != 0;
    csum.transport_offset = S::TransportOffset::get(oob.s.dw1);
    complete_tx_checksums(tx_frame_.data(), len, csum);
  }
  if (inject_vlan) len = insert_vlan_tag(tx_frame_.data(), len, tx_vlan_tci(oob.l));
  if (len > mtu_frame + (has_vlan_tag(frame) ? kVlanTagLen : 0)) return {hw::kCqeTxMtuDrop};
  if (wire_transmit(port, frame, len))
    ++port.counters.tx_frames;
  else if (port.wire->retry_later())
    return {kTxRetryLater};
  else
    ++port.counters.tx_wire_drops;
  ++sq.counters.packets;
  sq.counters.bytes += len;
  return kTxOk;
}

[[gnu::always_inline]] inline void DeviceImpl::complete_tx(Sq& sq, const WqeView& w,
                                                           CqeStatus status) {
  // tx_wqe_offset: where the SQ has got to, in the unit of hw tx-wqe-offset (doc/hardware.md §4.7).
  const bool bytes = config_.hw.tx_wqe_offset == HwBehaviour::TxWqeOffset::kBytes;
  const uint32_t offset = bytes ? w.offset_bu * hw::kBasicUnit : w.offset_bu;
  cq_post_in_place(*sq.cq, sq.id, true, [&](uint32_t* dw) {
    dw[0] = cqe_header(status);
    dw[hw::Cqe::kTxWqeOffsetDword] = hw::Cqe::TxWqeOffset::set(0, offset);
  });
  ++sq.counters.cqes;
  if (status.type != hw::kCqeTxOkay) ++sq.counters.error_cqes;
}

}  // namespace mana::emu
