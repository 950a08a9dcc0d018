// SPDX-License-Identifier: BSD-3-Clause
// The synthetic RX path (doc/hardware.md §11.8): a wire frame passes the guest's packet filter,
// RSS (the guest's key and table, Toeplitz over the NDIS input) picks its channel, the frame goes
// into a free receive section as an RNDIS packet message with per-packet info (checksum, hash),
// and an RXBUF packet names the section.
#include <cstring>

#include "device/offloads.h"
#include "mana/gdma_format.h"
#include "netvsc/ndis_format.h"
#include "netvsc/netvsp_state.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc {
namespace {

bool passes_filter(const NetvspHost::State& s, const uint8_t* frame) {
  const uint32_t f = s.packet_filter;
  if (f & rndis::kFilterPromiscuous) return true;
  static constexpr std::array<uint8_t, 6> kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  if (same_mac(frame, kBroadcast)) return f & rndis::kFilterBroadcast;
  if (frame[0] & 1) return f & (rndis::kFilterMulticast | rndis::kFilterAllMulticast);
  return (f & rndis::kFilterDirected) && same_mac(frame, s.config.mac);
}

// The RSS queue and the NDIS hash info (0 = no hash) of a frame.
unsigned rss_queue(const NetvspHost::State& s, const uint8_t* frame, const FrameInfo& info,
                   uint32_t* hash, uint32_t* hash_info) {
  *hash_info = 0;
  if (!s.rss.enabled || s.rss.table_size == 0) return 0;
  uint8_t input[36];
  uint32_t len = 0;
  const bool tcp = info.l4_proto == kIpProtoTcp && info.l4_offset != 0 && !info.fragment;
  uint32_t type = 0;
  if (info.l3 == FrameInfo::L3::kIpv4 && info.l3_len != 0) {
    std::memcpy(input, frame + info.l3_offset + 12, 8);
    len = 8;
    type = tcp && (s.rss.hash_types & ndis::kHashTcpIpv4) ? ndis::kHashTcpIpv4 : ndis::kHashIpv4;
  } else if (info.l3 == FrameInfo::L3::kIpv6 && info.l3_len != 0) {
    std::memcpy(input, frame + info.l3_offset + 8, 32);
    len = 32;
    type = tcp && (s.rss.hash_types & ndis::kHashTcpIpv6) ? ndis::kHashTcpIpv6 : ndis::kHashIpv6;
  }
  if (len == 0 || !(s.rss.hash_types & type)) return 0;
  if (type == ndis::kHashTcpIpv4 || type == ndis::kHashTcpIpv6) {
    std::memcpy(input + len, frame + info.l4_offset, 4);  // source and destination ports
    len += 4;
  }
  *hash = s.rss.hasher->hash(input, len);
  *hash_info = type | ndis::kHashFunctionToeplitz;
  return s.rss.table[*hash % s.rss.table_size];
}

uint32_t rx_csum_info(const uint8_t* frame, const FrameInfo& info) {
  using hw::Cqe;
  const uint32_t dw1 = rx_checksum_flags(frame, info, false);
  uint32_t v = 0;
  if (Cqe::RxIpCsumOk::get(dw1)) v |= ndis::kRxCsumIpOk;
  if (Cqe::RxIpCsumFail::get(dw1)) v |= ndis::kRxCsumIpFailed;
  if (Cqe::RxTcpCsumOk::get(dw1)) v |= ndis::kRxCsumTcpOk;
  if (Cqe::RxTcpCsumFail::get(dw1)) v |= ndis::kRxCsumTcpFailed;
  if (Cqe::RxUdpCsumOk::get(dw1)) v |= ndis::kRxCsumUdpOk;
  if (Cqe::RxUdpCsumFail::get(dw1)) v |= ndis::kRxCsumUdpFailed;
  return v;
}

// Appends one 16-byte per-packet info record with a 4-byte value.
uint8_t* put_ppi(uint8_t* at, uint32_t type, uint32_t value) {
  const rndis::PacketInfo pi{16, type, sizeof(rndis::PacketInfo)};
  std::memcpy(at, &pi, sizeof(pi));
  std::memcpy(at + sizeof(pi), &value, 4);
  return at + 16;
}

}  // namespace

bool receive_frame(NetvspHost::State& s, std::span<const uint8_t> frame) {
  if (!s.rxbuf_connected || !s.rndis_initialized) {
    ++s.counters.rx_dropped_not_ready;
    return false;
  }
  if (frame.size() < kEthHeaderLen || !passes_filter(s, frame.data())) {
    ++s.counters.rx_filtered;
    return false;
  }
  const uint32_t len = static_cast<uint32_t>(frame.size());
  FrameInfo info;
  parse_frame(frame.data(), len, &info);
  uint32_t hash = 0, hash_info = 0;
  unsigned q = rss_queue(s, frame.data(), info, &hash, &hash_info);
  if (q != 0 && (q > s.subchannels || s.hooks.channel(q) == nullptr)) q = 0;
  const uint32_t ppi_len = (s.config.rx_checksum_info ? 16 : 0) + (hash_info ? 32 : 0);
  const uint32_t data_at = sizeof(rndis::PacketMsg) + ppi_len;
  const uint32_t msg_len = data_at + len;
  if (msg_len > s.sections.section_size()) {
    ++s.counters.rx_dropped_too_long;
    return false;
  }
  if (channel_has_pending(s, q)) {
    ++s.counters.rx_dropped_ring_full;
    return false;
  }
  const uint32_t id = s.sections.allocate();
  if (id == ReceiveSections::kNone) {
    ++s.counters.rx_dropped_no_section;
    return false;
  }
  const uint32_t offset = id * s.sections.section_size();
  uint8_t* at = s.memory.receive_buffer().data() + offset;
  rndis::PacketMsg m{};
  m.type = rndis::kPacketMsg;
  m.len = msg_len;
  m.dataoffset = data_at - rndis::kPacketOffsetBase;
  m.datalen = len;
  m.pktinfooffset = ppi_len ? sizeof(m) - rndis::kPacketOffsetBase : 0;
  m.pktinfolen = ppi_len;
  std::memcpy(at, &m, sizeof(m));
  uint8_t* ppi = at + sizeof(m);
  if (s.config.rx_checksum_info)
    ppi = put_ppi(ppi, rndis::kPpiChecksum, rx_csum_info(frame.data(), info));
  if (hash_info) {
    ppi = put_ppi(ppi, rndis::kPpiHashValue, hash);
    ppi = put_ppi(ppi, rndis::kPpiHashInfo, hash_info);
  }
  std::memcpy(at + data_at, frame.data(), len);
  const RxbufRange range{msg_len, offset};
  nvsp::Rndis nvs{};
  nvs.type = nvsp::kTypeRndis;
  nvs.mtype = nvsp::kRndisData;
  nvs.chim_idx = nvsp::kNoChimneySection;
  if (!s.hooks.channel(q)->send_rxbuf(nvsp::kRxbufSignature, {&range, 1},
                                      {reinterpret_cast<const uint8_t*>(&nvs), s.reply_size()},
                                      id)) {
    s.sections.release(id);
    ++s.counters.rx_dropped_ring_full;
    return false;
  }
  ++s.counters.rx_packets;
  s.counters.rx_bytes += len;
  return true;
}

}  // namespace mana::emu::netvsc
