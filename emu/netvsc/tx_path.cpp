// SPDX-License-Identifier: BSD-3-Clause
// The synthetic TX path (doc/hardware.md §11.7): RNDIS packet messages from a chimney section
// (several aggregated, each padded to the guest's alignment) or from GPA ranges (the RNDIS header
// in the first range, the frame in the following ones); per-packet info asks for checksums, LSOv2
// or a VLAN tag. Every guest packet with "completion requested" is completed (COMP 108) on its
// channel with its transaction id: DPDK frees descriptors and chimney sections only then.
#include <cstring>

#include "device/offloads.h"
#include "device/tso.h"
#include "netvsc/ndis_format.h"
#include "netvsc/netvsp_state.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc {
namespace {

constexpr uint32_t kMaxGather = kMaxTsoPacket + 4096;  // a 64 KiB LSO packet and its RNDIS header

struct TxRequest {
  bool vlan = false;
  uint16_t tci = 0;
  uint32_t csum = 0;  // NDIS TX checksum info, 0 = none
  uint32_t lso = 0;   // NDIS LSOv2 info, 0 = none
};

// Sends `frame` (copied into the scratch buffer when it must change) with the requested tag.
void emit(NetvspHost::State& s, const uint8_t* frame, uint32_t len, const TxRequest& r) {
  const uint8_t* out = frame;
  if (r.vlan) {
    s.frame_scratch.resize(len + kVlanTagLen);
    if (frame != s.frame_scratch.data()) std::memcpy(s.frame_scratch.data(), frame, len);
    len = insert_vlan_tag(s.frame_scratch.data(), len, r.tci);
    out = s.frame_scratch.data();
  }
  s.hooks.transmit_frame({out, len});
}

bool transmit_one(NetvspHost::State& s, std::span<const uint8_t> frame, const TxRequest& r) {
  if (frame.size() < kEthHeaderLen) return false;
  const uint32_t len = static_cast<uint32_t>(frame.size());
  if (r.lso) {
    TsoRequest t;
    t.mss = r.lso & ndis::kLso2MssMask;
    t.transport_offset = (r.lso >> ndis::kLso2ThoffShift) & ndis::kLso2ThoffMask;
    t.is_ipv4 = !(r.lso & ndis::kLso2IsIpv6);
    if (t.transport_offset + 20 > len) return false;
    t.header_len = t.transport_offset + ((frame[t.transport_offset + 12] >> 4) * 4u);
    if (!tso_headers_ok(frame.data(), len, t)) return false;
    const uint32_t n = tso_segment_count(len, t);
    // Grows once to the largest segment; no allocation per packet after that.
    std::vector<uint8_t>& seg = s.segment_scratch;
    if (seg.size() < tso_max_segment_len(len, t) + kVlanTagLen)
      seg.resize(tso_max_segment_len(len, t) + kVlanTagLen);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t l = tso_build_segment(frame.data(), len, t, i, seg.data());
      emit(s, seg.data(), l, r);
    }
    return true;
  }
  if (r.csum) {
    s.frame_scratch.resize(len + kVlanTagLen);
    std::memcpy(s.frame_scratch.data(), frame.data(), len);
    TxChecksumRequest c;
    c.ipv4_header = r.csum & ndis::kTxCsumIp;
    c.tcp = r.csum & ndis::kTxCsumTcp;
    c.udp = r.csum & ndis::kTxCsumUdp;
    c.is_ipv4 = r.csum & ndis::kTxCsumIpv4;
    c.is_ipv6 = r.csum & ndis::kTxCsumIpv6;
    c.transport_offset = (r.csum >> ndis::kTxCsumThoffShift) & ndis::kTxCsumThoffMask;
    complete_tx_checksums(s.frame_scratch.data(), len, c);
    emit(s, s.frame_scratch.data(), len, r);
    return true;
  }
  emit(s, frame.data(), len, r);
  return true;
}

// Parses the per-packet info list; false when it is malformed.
bool parse_ppi(std::span<const uint8_t> ppi, TxRequest* r) {
  while (!ppi.empty()) {
    rndis::PacketInfo pi;
    if (ppi.size() < sizeof(pi)) return false;
    std::memcpy(&pi, ppi.data(), sizeof(pi));
    if (pi.size < sizeof(pi) || pi.size > ppi.size() || pi.offset < sizeof(pi) ||
        pi.offset + 4 > pi.size)
      return false;
    uint32_t v;
    std::memcpy(&v, ppi.data() + pi.offset, 4);
    if (pi.type == rndis::kPpiChecksum) r->csum = v;
    if (pi.type == rndis::kPpiLso) r->lso = v;
    if (pi.type == rndis::kPpiVlan) {
      r->vlan = true;
      r->tci = static_cast<uint16_t>(ndis::vlan_info_to_tci(v));
    }
    ppi = ppi.subspan(pi.size);
  }
  return true;
}

// One or more RNDIS packet messages back to back; returns the first problem, or null.
const char* transmit_messages(NetvspHost::State& s, std::span<const uint8_t> data) {
  if (data.empty()) return "no RNDIS message";
  while (!data.empty()) {
    rndis::PacketMsg m;
    if (data.size() < sizeof(m)) return "RNDIS packet message shorter than its header";
    std::memcpy(&m, data.data(), sizeof(m));
    if (m.type != rndis::kPacketMsg) return "not an RNDIS packet message";
    if (m.len < sizeof(m) || m.len > data.size()) return "RNDIS packet length outside the data";
    const uint64_t d = uint64_t{m.dataoffset} + rndis::kPacketOffsetBase;
    const uint64_t p = uint64_t{m.pktinfooffset} + rndis::kPacketOffsetBase;
    if (m.datalen == 0 || d < sizeof(m) || d + m.datalen > m.len) return "RNDIS data outside it";
    TxRequest r;
    if (m.pktinfolen != 0 && (p < sizeof(m) || p + m.pktinfolen > m.len ||
                              !parse_ppi(data.subspan(p, m.pktinfolen), &r)))
      return "bad RNDIS per-packet info";
    if (!transmit_one(s, data.subspan(d, m.datalen), r)) return "frame the host cannot send";
    ++s.counters.tx_packets;
    s.counters.tx_bytes += m.datalen;
    data = data.subspan(m.len);
  }
  return nullptr;
}

}  // namespace

void handle_tx(NetvspHost::State& s, unsigned channel, const GuestPacket& p, uint32_t chim_idx,
               uint32_t chim_sz) {
  const char* problem = nullptr;
  if (chim_idx != nvsp::kNoChimneySection) {
    const uint64_t at = uint64_t{chim_idx} * s.config.chimney_section_size;
    if (!s.chimney_connected || !p.ranges.empty() || chim_sz > s.config.chimney_section_size ||
        at + chim_sz > s.memory.send_buffer().size())
      problem = "bad chimney section";
    else
      problem = transmit_messages(s, s.memory.send_buffer().subspan(at, chim_sz));
  } else if (p.ranges.empty()) {
    problem = "data packet with neither chimney section nor GPA ranges";
  } else {
    std::vector<uint8_t>& buf = s.tx_scratch;
    buf.clear();
    for (const GpaRange& r : p.ranges) {
      auto part = s.memory.guest_range(r.page, r.offset, r.len);
      if (part.size() != r.len || buf.size() + r.len > kMaxGather) {
        problem = "GPA range outside guest memory or too long";
        break;
      }
      buf.insert(buf.end(), part.begin(), part.end());
    }
    if (!problem) problem = transmit_messages(s, buf);
  }
  if (problem) drop_malformed(s, channel, "TX: %s", problem);
  if (!(p.flags & kFlagCompletionRequested)) return;
  // A failed status still completes: the guest counts an error and frees the descriptor.
  nvsp::RndisAck ack{nvsp::kTypeRndisAck, problem ? nvsp::kStatusFailed : nvsp::kStatusOk, {}};
  send_completion(s, channel, {reinterpret_cast<const uint8_t*>(&ack), s.reply_size()}, p.xact_id);
  ++s.counters.tx_completions;
}

}  // namespace mana::emu::netvsc
