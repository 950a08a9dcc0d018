// SPDX-License-Identifier: BSD-3-Clause
// RX data path: wire -> address filter -> MTU -> VLAN strip -> checksum verification -> RSS
// steering -> next posted RQ WQE -> RX CQE, one per frame or CQE_RX_COALESCED_4 (doc/hardware.md
// §4.7, §4.10).
#include <cstring>

#include "device/device_impl.h"
#include "device/wire_io.h"
#include "mana/frame_parse_inline.h"

namespace mana::emu {

namespace {

constexpr CqeStatus kRxTruncated{hw::kCqeRxTruncated};
constexpr CqeStatus kRxBadBuffer{hw::kCqeRxTruncated, hw::kVendorErrAddrRange};

bool addressed_to(const uint8_t* frame, const std::array<uint8_t, 6>& mac) {
  const bool group = frame[0] & 1;  // multicast, including broadcast
  return group || same_mac(frame, mac);
}

// A flow-controlled wire keeps its frames while a queue of the port has no buffer posted; with no
// RX queue configured the port takes them and drops them as a NIC does.
bool can_take_frame(const Port& port) {
  if (!port.wire_holds_rx_frames || port.rss == nullptr) return true;
  for (const Rq* rq : port.rss->rqs)
    if (!rq->dead && rq->pending_bu() == 0) return false;
  return true;
}

}  // namespace

// Defined before its callers, so that they inline it.
template <typename Fill>
[[gnu::always_inline]] inline void DeviceImpl::post_rx_cqe(Rq& rq, uint32_t wqe_offset,
                                                           Fill&& fill) {
  zero_length_cqe_if_due(rq, wqe_offset);
  cq_post_in_place(*rq.cq, rq.id, false, fill);
  ++rq.counters.cqes;
}

// Frames that reached the vPort while it had no RX steering belong to no queue: a NIC drops them on
// arrival. The device thread may not have polled the port since (a QP destroyed with posted TX
// frames on a loop wire just before a new RSS QP), so they must not reach the new queues.
void DeviceImpl::drop_unsteered_frames(Port& port) {
  constexpr unsigned kMaxFrames = 4096;  // bounds a wire that keeps delivering (a busy TAP)
  for (unsigned i = 0; i < kMaxFrames; ++i) {
    const uint32_t len = wire_receive(port, rx_frame_.data(), kRxStagingBytes, nullptr);
    if (len == 0) return;
    ++port.counters.rx_frames;
    if (len < kEthHeaderLen || !addressed_to(rx_frame_.data(), port.mac))
      ++port.counters.rx_filtered;
    else if (port.stale.active)
      route_stale_frame(port, rx_frame_.data(), len);
    else
      ++port.counters.rx_no_wqe_drops;
  }
}

[[gnu::always_inline]] inline bool DeviceImpl::claim_rx_wqe(Port& port, Rq& rq, RxBuffer* b) {
  if (rq.dead || rq.pending_bu() == 0) return false;
  prefetch_ring_ahead(rq);
  b->status = {hw::kCqeRxOkay};
  b->capacity = 0;
  b->corrupt = !read_wqe(rq, &b->wqe);
  if (b->corrupt) {
    // The header claims more than the doorbell announced: fail it and skip that work.
    b->wqe.size_bu = rq.pending_bu();
    b->status = kRxBadBuffer;
    return true;
  }
  const WqeView& w = b->wqe;
  if (w.oob_bytes != hw::kShortOobSize || w.num_sge > config_.limits.max_recv_sge ||
      w.num_sge > hw::kMaxRxSge) {
    b->status = kRxBadBuffer;
    return true;
  }
  read_sgl(rq, w, b->sges, w.num_sge ? w.num_sge : 1);
  prefetch_first_buffer(rq, (w.offset_bu + w.size_bu) & kBuMask, true);
  const bool keys_invalid = port.faults.rx_bad_lkey_count != 0;  // consumed in deliver
  uint64_t capacity = 0;
  if (check_sgl(mr_table_, mr_cache_, rq.pd_id, b->sges, w.num_sge, true, keys_invalid,
                &capacity) != SglStatus::kOk) {
    b->status = kRxBadBuffer;
    return true;
  }
  b->capacity = capacity;
  return true;
}

unsigned DeviceImpl::receive_port(Port& port, unsigned budget) {
  unsigned n = 0;
  if (port.wire_holds_rx_frames) port.wire->receiver_polled();
  const uint32_t mtu_frame = port_mtu(port) + kEthHeaderLen;
  const HwBehaviour::RxOversize oversize_rule = config_.hw.rx_oversize;
  RxBuffer direct;
  // Fixed for the pass: steering changes only on the control path, which waits for the lock
  // `poll` holds.
  RssQp* const rss = port.rss;
  // With one RX queue the destination is known before the frame is read: receive it straight
  // into the next posted buffer (a NIC may write posted buffers it does not complete).
  Rq* const single = rss != nullptr && rss->rqs.size() == 1 ? rss->rqs[0] : nullptr;
  for (; n < budget && can_take_frame(port); ++n) {
    const bool to_buffer = single != nullptr && claim_rx_wqe(port, *single, &direct) &&
                           direct.status.type == hw::kCqeRxOkay && direct.wqe.num_sge == 1 &&
                           !port.faults.rx_error.armed();
    uint8_t* buf =
        to_buffer ? reinterpret_cast<uint8_t*>(direct.sges[0].address) : rx_frame_.data();
    const uint32_t cap = to_buffer ? direct.sges[0].size : kRxStagingBytes;
    uint32_t full_len = 0;
    uint32_t len = wire_receive(port, buf, cap, &full_len);
    if (len == 0) break;
    ++port.counters.rx_frames;
    if (full_len < len) full_len = len;
    if (len < kEthHeaderLen || !addressed_to(buf, port.mac)) {
      ++port.counters.rx_filtered;
      continue;
    }
    const bool tagged = has_vlan_tag(buf);
    const bool oversize = full_len > mtu_frame + (tagged ? kVlanTagLen : 0);
    if (oversize) ++port.counters.rx_oversize;
    if ((oversize && oversize_rule == HwBehaviour::RxOversize::kDrop) ||
        (!to_buffer && full_len > len)) {
      ++port.counters.rx_mtu_drops;
      continue;
    }
    // hw rx-oversize=truncate: completed as CQE_RX_TRUNCATED; =deliver: whole if it fits.
    const bool truncate = oversize && oversize_rule == HwBehaviour::RxOversize::kTruncate;
    if (rss == nullptr) {  // no RX queue configured on the vPort
      if (port.stale.active)
        route_stale_frame(port, buf, len);  // hw rx-steering-on-destroy=keep
      else
        ++port.counters.rx_no_wqe_drops;
      continue;
    }
    if (full_len > len) {  // did not fit the posted buffer
      deliver(port, *single, &direct, buf, full_len, 0, 0, truncate);
      continue;
    }
    uint8_t* frame = buf;
    uint32_t dw1 = 0;
    if (tagged && len >= kEthHeaderLen + kVlanTagLen) {
      const uint16_t tci = strip_vlan_tag(&frame, &len);
      dw1 = hw::Cqe::RxVlanId::set(dw1, tci & 0xFFF);
      dw1 = hw::Cqe::RxVlanPresent::set(dw1, 1);
    }
    FrameInfo info;
    parse_frame_inline(frame, len, &info);
    dw1 |= rx_checksum_flags(frame, info, config_.hw.ipv6_ip_csum);
    Rq* rq = port.default_rq;
    uint32_t hash = 0;
    if (rss->hashes) {
      const RssInput input = rss_input(frame, info);
      if (input.hash_type != 0) {
        hash = rss->hasher->hash(input.bytes, input.len);
        rq = port.steering[hash & (hw::kRssTableSize - 1)];
        dw1 = hw::Cqe::RxHashType::set(dw1, hash_type_field(input.hash_type));
      }
    }
    deliver(port, *rq, to_buffer ? &direct : nullptr, frame, len, dw1, hash, truncate);
  }
  return n;
}

uint32_t DeviceImpl::hash_type_field(uint32_t one_bit) const {
  if (config_.hw.hash_type == HwBehaviour::HashType::kOneBit) return one_bit;
  return (one_bit & hw::kHashL4) != 0 ? hw::kHashL4 : hw::kHashL3;  // what DPDK compares with
}

[[gnu::always_inline]] inline void DeviceImpl::deliver(Port& port, Rq& rq, RxBuffer* claimed,
                                                       const uint8_t* frame, uint32_t len,
                                                       uint32_t dw1, uint32_t hash, bool truncate) {
  // CQ doorbell rule: room for this completion, an open coalesced one and a zero-length one.
  if (rq.cq->doorbell_rule != HwBehaviour::CqDoorbellRule::kOff && !rq.dead &&
      !cq_admits_slow(*rq.cq, rq,
                      1 + (rq.coalesced_count != 0) + (config_.hw.zero_length_cqe_every != 0) +
                          port.faults.rx_error.armed())) {
    ++port.counters.rx_no_wqe_drops;  // a stalled RQ takes no frame, as one without WQEs
    return;
  }
  PortFaults& faults = port.faults;
  // An injected RX CQE of a type other than CQE_RX_TRUNCATED (an object fence, CQE_INVALID, an
  // unknown type) consumes no RQ WQE, as the kernel's mana_process_rx_cqe reads them
  // (doc/hardware.md §4.7): it goes before this frame's completion, and the frame is delivered.
  if (faults.rx_error.armed() && faults.rx_error.cqe_type != hw::kCqeRxTruncated &&
      faults.rx_error.take()) {
    flush_coalesced(rq);
    hw::Cqe cqe{};
    cqe.dw[0] = cqe_header({faults.rx_error.cqe_type});
    post_rx_cqe(rq, cqe);
    ++rq.counters.error_cqes;
  }
  if (claimed == nullptr) {
    claim_and_complete(port, rq, frame, len, dw1, hash, truncate);
    return;
  }
  complete_rx(port, rq, claimed, frame, len, dw1, hash, truncate);
}

// Out of line: its RxBuffer's initialisation stays off the path of frames received in place.
void DeviceImpl::claim_and_complete(Port& port, Rq& rq, const uint8_t* frame, uint32_t len,
                                    uint32_t dw1, uint32_t hash, bool truncate) {
  RxBuffer local;
  if (!claim_rx_wqe(port, rq, &local)) {
    ++port.counters.rx_no_wqe_drops;  // no CQE (doc/hardware.md §4.9)
    return;
  }
  complete_rx(port, rq, &local, frame, len, dw1, hash, truncate);
}

[[gnu::always_inline]] inline void DeviceImpl::complete_rx(Port& port, Rq& rq, RxBuffer* b,
                                                           const uint8_t* frame, uint32_t len,
                                                           uint32_t dw1, uint32_t hash,
                                                           bool truncate) {
  PortFaults& faults = port.faults;
  const WqeView& w = b->wqe;
  rq.consumed_bu = b->corrupt ? rq.tail_bu : (rq.consumed_bu + w.size_bu) & kBuMask;
  ++rq.counters.wqes;
  if (faults.rx_error.cqe_type == hw::kCqeRxTruncated && faults.rx_error.take()) {
    post_rx_error(rq, w, {faults.rx_error.cqe_type});
    return;
  }
  if (faults.rx_bad_lkey_count != 0 && !b->corrupt) --faults.rx_bad_lkey_count;
  if (b->status.type != hw::kCqeRxOkay) {
    post_rx_error(rq, w, b->status);
    return;
  }
  if (truncate || len > b->capacity) {
    post_rx_error(rq, w, kRxTruncated);
    return;
  }
  // A frame received in place into its first buffer is there already (the loop below would find
  // nothing to move); memmove: one received into its buffer may have moved by a VLAN strip.
  const bool in_place =
      frame == reinterpret_cast<const uint8_t*>(b->sges[0].address) && len <= b->sges[0].size;
  for (uint32_t i = 0, done = in_place ? len : 0; done < len; ++i) {
    const uint32_t chunk = b->sges[i].size < len - done ? b->sges[i].size : len - done;
    void* dst = reinterpret_cast<void*>(b->sges[i].address);
    if (dst != frame + done) std::memmove(dst, frame + done, chunk);
    done += chunk;
  }
  ++rq.counters.packets;
  rq.counters.bytes += len;

  hw::RxPacketInfo info{hw::RxPacketInfo::Length::set(0, len), 0, hash};
  if (!config_.rx_coalescing) {
    const uint32_t wqe_offset = w.offset_bu * hw::kBasicUnit;
    post_rx_cqe(rq, wqe_offset, [&](uint32_t* dw) {
      dw[0] = cqe_header({hw::kCqeRxOkay});
      dw[hw::Cqe::kRxFlagsDword] = dw1;
      std::memcpy(&dw[hw::Cqe::kRxPacketInfoDword], &info, sizeof(info));
      dw[hw::Cqe::kRxWqeOffsetDword] = wqe_offset;
    });
    return;
  }
  // Coalesce consecutive packets of this RQ that share their dw1 metadata.
  if (rq.coalesced_count != 0 && rq.coalesced.dw[hw::Cqe::kRxFlagsDword] != dw1)
    flush_coalesced(rq);
  if (rq.coalesced_count == 0) {
    rq.coalesced = hw::Cqe{};
    rq.coalesced.dw[0] = cqe_header({hw::kCqeRxCoalesced4});
    rq.coalesced.dw[hw::Cqe::kRxFlagsDword] = dw1;
    rq.coalesced.dw[hw::Cqe::kRxWqeOffsetDword] = w.offset_bu * hw::kBasicUnit;
  }
  rq.coalesced.rx_packet(rq.coalesced_count++) = info;
  if (rq.coalesced_count == hw::Cqe::kRxMaxPackets) flush_coalesced(rq);
}

void DeviceImpl::post_rx_error(Rq& rq, const WqeView& w, CqeStatus status) {
  flush_coalesced(rq);  // completions stay in WQE order
  hw::Cqe cqe{};
  cqe.dw[0] = cqe_header(status);
  cqe.dw[hw::Cqe::kRxWqeOffsetDword] = w.offset_bu * hw::kBasicUnit;
  post_rx_cqe(rq, cqe);
  ++rq.counters.error_cqes;
}

void DeviceImpl::flush_coalesced(Rq& rq) {
  if (rq.coalesced_count == 0) return;
  rq.coalesced_count = 0;
  if (rq.dead) return;  // a failed or removed queue completes nothing more
  post_rx_cqe(rq, rq.coalesced);
}

[[gnu::always_inline]] inline void DeviceImpl::zero_length_cqe_if_due(Rq& rq, uint32_t wqe_offset) {
  const uint32_t every = config_.hw.zero_length_cqe_every;
  if (every != 0 && ++rq.completions_since_zero_length == every) {
    rq.completions_since_zero_length = 0;
    // hw zero-length-cqe: a completion whose first packet has length 0 and that consumed no WQE
    // (mana_process_rx_cqe and DPDK skip it); it names the WQE the next completion names.
    hw::Cqe empty{};
    empty.dw[0] = cqe_header({config_.rx_coalescing ? hw::kCqeRxCoalesced4 : hw::kCqeRxOkay});
    empty.dw[hw::Cqe::kRxWqeOffsetDword] = wqe_offset;
    cq_post(*rq.cq, empty, rq.id, false);
    ++rq.counters.cqes;
    ++rq.counters.zero_length_cqes;
  }
}

[[gnu::always_inline]] inline void DeviceImpl::post_rx_cqe(Rq& rq, const hw::Cqe& cqe) {
  post_rx_cqe(rq, cqe.dw[hw::Cqe::kRxWqeOffsetDword], [&cqe](uint32_t* dw) {
    std::memcpy(dw, cqe.dw, hw::Cqe::kOwnerDword * sizeof(dw[0]));
  });
}

void DeviceImpl::flush_all_coalesced() {
  if (!config_.rx_coalescing) return;
  for (Port& port : ports_)
    if (port.rss != nullptr)
      for (Rq* rq : port.rss->rqs) flush_coalesced(*rq);
}

}  // namespace mana::emu
