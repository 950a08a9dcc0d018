// SPDX-License-Identifier: BSD-3-Clause
// NVS control messages (doc/hardware.md §11.3): version negotiation, NDIS configuration, the
// receive and send buffers, subchannels. Requests the guest sends with "completion requested" are
// answered by a completion carrying the reply (OpenVMM netvsp; DPDK reads it as the response);
// requests without it get no answer.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "device/offloads.h"
#include "netvsc/netvsp_state.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc {
namespace {

constexpr uint32_t kSupportedVersions[] = {nvsp::kVersion1, nvsp::kVersion2, nvsp::kVersion4,
                                           nvsp::kVersion5, nvsp::kVersion6, nvsp::kVersion61};
// The receive section layout of OpenVMM (buffers.rs): 256 bytes of RNDIS header room, the frame,
// a 36-byte footer.
constexpr uint32_t kRxHeaderRoom = 256;
constexpr uint32_t kRxFooter = 36;
// NDIS_CONF MTUs the vmswitch takes, with the Ethernet header (OpenVMM MIN_MTU, MAX_MTU).
constexpr uint32_t kNdisMtuMin = 1514;
constexpr uint32_t kNdisMtuMax = 9216;

template <typename T>
bool read_message(std::span<const uint8_t> body, uint32_t needed, T* out) {
  if (body.size() < needed) return false;
  *out = {};
  std::memcpy(out, body.data(), std::min<size_t>(body.size(), sizeof(T)));
  return true;
}

// Answers a request: a completion with `reply` padded to the session's NVSP packet size.
template <typename T>
void reply(NetvspHost::State& s, unsigned channel, const GuestPacket& p, const T& msg) {
  if (!(p.flags & kFlagCompletionRequested)) return;
  uint8_t buf[nvsp::kPacketSizeV61] = {};
  std::memcpy(buf, &msg, sizeof(T));
  const uint32_t len = std::max<uint32_t>(s.reply_size(), sizeof(T));
  send_completion(s, channel, {buf, len}, p.xact_id);
}

void complete_empty(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  if (p.flags & kFlagCompletionRequested) send_completion(s, channel, {}, p.xact_id);
}

bool version_supported(const NetvspHost::State& s, uint32_t v) {
  if (v > s.config.max_nvsp_version) return false;
  for (uint32_t k : kSupportedVersions)
    if (k == v) return true;
  return false;
}

void handle_init(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  nvsp::Init m;
  if (!read_message(p.body, 12, &m)) return drop_malformed(s, channel, "NVS INIT too short");
  nvsp::InitResp r{};
  r.type = nvsp::kTypeInitResp;
  r.rsvd = 34;  // maximum MDL chain length (OpenVMM)
  const bool ok = version_supported(s, m.ver_min);
  r.status = ok ? nvsp::kStatusOk : nvsp::kStatusNone;
  r.ver = ok ? m.ver_min : 0;
  if (ok) {
    // A new session: what a previous one connected is gone.
    s.ndis_configured = false;
    s.rxbuf_connected = s.chimney_connected = false;
    s.sections.clear();
    s.rndis_initialized = false;
  }
  reply(s, channel, p, r);  // sized for the version in use before this INIT
  if (ok) s.nvsp_version = m.ver_min;
}

void handle_rxbuf_conn(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  nvsp::BufferConn m;
  if (!read_message(p.body, 10, &m)) return drop_malformed(s, channel, "RXBUF_CONN too short");
  nvsp::RxbufConnResp r{};
  r.type = nvsp::kTypeRxbufConnResp;
  r.status = nvsp::kStatusFailed;
  const uint32_t frame_max = std::max(s.frame_max(), s.config.mtu + kEthHeaderLen);
  uint32_t size = s.config.rxbuf_section_size;
  if (size == 0) size = (kRxHeaderRoom + frame_max + kRxFooter + 7) & ~7u;
  const uint32_t buffer_len = static_cast<uint32_t>(s.memory.receive_buffer().size());
  if (s.rxbuf_connected || m.gpadl != s.memory.receive_buffer_gpadl() || buffer_len < size ||
      (s.nvsp_version >= nvsp::kVersion2 && !s.ndis_configured)) {
    std::fprintf(stderr, "mana-emu: netvsc: RXBUF_CONN refused (gpadl %#x, ours %#x%s%s)\n",
                 m.gpadl, s.memory.receive_buffer_gpadl(),
                 s.rxbuf_connected ? ", already connected" : "",
                 s.ndis_configured || s.nvsp_version < nvsp::kVersion2 ? "" : ", before NDIS_CONF");
  } else {
    s.sections.configure(buffer_len, size);
    s.rxbuf_connected = true;
    r.status = nvsp::kStatusOk;
    r.nsect = 1;
    r.sect = {0, size, s.sections.count(), size * s.sections.count()};
  }
  reply(s, channel, p, r);
}

void handle_chim_conn(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  nvsp::BufferConn m;
  if (!read_message(p.body, 10, &m)) return drop_malformed(s, channel, "CHIM_CONN too short");
  nvsp::ChimConnResp r{nvsp::kTypeChimConnResp, nvsp::kStatusFailed, 0};
  if (!s.chimney_connected && m.gpadl == s.memory.send_buffer_gpadl() &&
      s.config.chimney_section_size != 0 &&
      s.memory.send_buffer().size() >= s.config.chimney_section_size) {
    s.chimney_connected = true;
    r.status = nvsp::kStatusOk;
    r.sectsz = s.config.chimney_section_size;
  } else {
    std::fprintf(stderr, "mana-emu: netvsc: CHIM_CONN refused (gpadl %#x, ours %#x)\n", m.gpadl,
                 s.memory.send_buffer_gpadl());
  }
  reply(s, channel, p, r);
}

void handle_subchannels(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  nvsp::SubchReq m;
  if (!read_message(p.body, 12, &m)) return drop_malformed(s, channel, "SUBCH_REQ too short");
  nvsp::SubchResp r{};
  r.type = nvsp::kTypeSubchannel;
  r.status = nvsp::kStatusFailed;
  // Primary + subchannels within max_queues (OpenVMM); a later request may only add.
  if (m.op == nvsp::kSubchannelAllocate && m.nsubch >= 1 && m.nsubch < s.config.max_queues &&
      s.nvsp_version >= nvsp::kVersion5 && s.rxbuf_connected) {
    if (m.nsubch > s.subchannels)
      s.subchannels += s.hooks.offer_subchannels(m.nsubch - s.subchannels);
    r.status = nvsp::kStatusOk;
    r.nsubch = std::min<uint32_t>(m.nsubch, s.subchannels);
  } else {
    std::fprintf(stderr, "mana-emu: netvsc: SUBCH_REQ op %u for %u subchannels refused (max %u)\n",
                 m.op, m.nsubch, s.config.max_queues - 1);
  }
  reply(s, channel, p, r);
}

// NVS RNDIS (107): control messages come in GPA ranges (DPDK, Linux) or a chimney section.
void handle_rndis(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  nvsp::Rndis m;
  if (!read_message(p.body, 16, &m)) return drop_malformed(s, channel, "NVS RNDIS too short");
  if (m.mtype == nvsp::kRndisData) return handle_tx(s, channel, p, m.chim_idx, m.chim_sz);
  if (m.mtype != nvsp::kRndisControl)
    return drop_malformed(s, channel, "NVS RNDIS channel type %u", m.mtype);
  std::span<const uint8_t> msg;
  std::vector<uint8_t>& buf = s.tx_scratch;
  if (m.chim_idx != nvsp::kNoChimneySection) {
    const uint64_t at = uint64_t{m.chim_idx} * s.config.chimney_section_size;
    if (!s.chimney_connected || m.chim_sz > s.config.chimney_section_size ||
        at + m.chim_sz > s.memory.send_buffer().size())
      return drop_malformed(s, channel, "RNDIS control in chimney section %u (%u bytes)",
                            m.chim_idx, m.chim_sz);
    msg = s.memory.send_buffer().subspan(at, m.chim_sz);
  } else {
    buf.clear();
    for (const GpaRange& r : p.ranges) {
      auto part = s.memory.guest_range(r.page, r.offset, r.len);
      if (part.size() != r.len || buf.size() + r.len > 65536)
        return drop_malformed(s, channel, "RNDIS control range page %#llx+%u len %u",
                              static_cast<unsigned long long>(r.page), r.offset, r.len);
      buf.insert(buf.end(), part.begin(), part.end());
    }
    msg = buf;
  }
  handle_rndis_control(s, channel, msg);
  const nvsp::RndisAck ack{nvsp::kTypeRndisAck, nvsp::kStatusOk, {}};
  reply(s, channel, p, ack);
}

}  // namespace

void handle_nvs_message(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  if (p.body.size() < 4) return drop_malformed(s, channel, "%zu-byte NVS message", p.body.size());
  uint32_t type;
  std::memcpy(&type, p.body.data(), 4);
  if (type != nvsp::kTypeRndis && channel != 0)
    return drop_malformed(s, channel, "NVS message %u on a subchannel", type);
  if (type != nvsp::kTypeInit && s.nvsp_version == 0)
    return drop_malformed(s, channel, "NVS message %u before INIT", type);
  if (p.type == kPacketGpa && type != nvsp::kTypeRndis)
    return drop_malformed(s, channel, "NVS message %u in a GPA packet", type);
  ++s.counters.nvs_messages;
  switch (type) {
    case nvsp::kTypeInit:
      return handle_init(s, channel, p);
    case nvsp::kTypeNdisConf: {
      nvsp::NdisConf m;
      if (!read_message(p.body, 20, &m)) return drop_malformed(s, channel, "NDIS_CONF too short");
      if (s.rxbuf_connected) return drop_malformed(s, channel, "NDIS_CONF after RXBUF_CONN");
      s.ndis_configured = true;
      // vmswitch (OpenVMM): an MTU outside 1514..9216 bytes means the default, 1514.
      s.ndis_mtu = m.mtu >= kNdisMtuMin && m.mtu <= kNdisMtuMax ? m.mtu : kNdisMtuMin;
      s.ndis_caps = m.caps;
      return complete_empty(s, channel, p);
    }
    case nvsp::kTypeNdisInit: {
      nvsp::NdisInit m;
      if (!read_message(p.body, 12, &m)) return drop_malformed(s, channel, "NDIS_INIT too short");
      s.ndis_major = m.ndis_major;
      s.ndis_minor = m.ndis_minor;
      return complete_empty(s, channel, p);
    }
    case nvsp::kTypeRxbufConn:
      return handle_rxbuf_conn(s, channel, p);
    case nvsp::kTypeChimConn:
      return handle_chim_conn(s, channel, p);
    case nvsp::kTypeRxbufDisconn:
      s.rxbuf_connected = false;
      s.rndis_initialized = false;  // its answers would have nowhere to go
      s.sections.clear();
      return complete_empty(s, channel, p);
    case nvsp::kTypeChimDisconn:
      s.chimney_connected = false;
      return complete_empty(s, channel, p);
    case nvsp::kTypeRndis:
      return handle_rndis(s, channel, p);
    case nvsp::kTypeSubchannel:
      return handle_subchannels(s, channel, p);
    case nvsp::kTypeSetDatapath: {
      if (p.body.size() < 8) return drop_malformed(s, channel, "SET_DATAPATH too short");
      uint32_t path;
      std::memcpy(&path, p.body.data() + 4, 4);
      return guest_set_datapath(s, channel, p, path);
    }
    default:
      --s.counters.nvs_messages;
      return drop_malformed(s, channel, "unknown NVS message type %u", type);
  }
}

void handle_guest_completion(NetvspHost::State& s, unsigned channel, const GuestPacket& p) {
  constexpr uint64_t kHostRequestBit = 0x8000000000000000ull;  // VFASSOC, SET_DATAPATH (ours)
  if (p.xact_id & kHostRequestBit) return;  // "not all clients send" these (OpenVMM)
  uint32_t type = 0;
  if (p.body.size() >= 4) std::memcpy(&type, p.body.data(), 4);
  if (type != nvsp::kTypeRndisAck)
    return drop_malformed(s, channel, "completion of type %u (expected RNDIS_ACK 108)", type);
  if (p.xact_id >= s.sections.count() || !s.sections.release(static_cast<uint32_t>(p.xact_id)))
    return drop_malformed(s, channel, "completion of receive section %llu not held by the guest",
                          static_cast<unsigned long long>(p.xact_id));
  if (channel_has_pending(s, 0)) flush_pending(s);  // a control answer may wait for a section
}

}  // namespace mana::emu::netvsc
