// SPDX-License-Identifier: BSD-3-Clause
// RNDIS control (doc/hardware.md §11.5): INITIALIZE, QUERY, SET, HALT, RESET, KEEPALIVE. Answers go
// to the guest through a receive section on the primary channel, as DPDK's hn_rndis.c waits for
// them.
#include <cstdio>
#include <cstring>
#include <vector>

#include "device/offloads.h"
#include "netvsc/ndis_format.h"
#include "netvsc/netvsp_state.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc {
namespace {

template <typename T>
void put(std::vector<uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

void answer(NetvspHost::State& s, unsigned channel, const std::vector<uint8_t>& msg) {
  if (!send_rndis_message(s, msg))
    std::fprintf(stderr, "mana-emu: netvsc: channel %u: RNDIS answer of %zu bytes has no room\n",
                 channel, msg.size());
}

void initialize(NetvspHost::State& s, unsigned channel, const rndis::InitReq& req) {
  // The values of OpenVMM's answer (lib.rs MESSAGE_TYPE_INITIALIZE_MSG).
  rndis::InitComp c{};
  c.type = rndis::kInitMsg | rndis::kCompletionBit;
  c.len = sizeof(c);
  c.rid = req.rid;
  c.status = rndis::kStatusSuccess;
  c.ver_major = rndis::kVersionMajor;
  c.ver_minor = rndis::kVersionMinor;
  c.devflags = rndis::kDfConnectionless;
  c.medium = rndis::kMedium8023;
  c.pktmaxcnt = s.config.rndis_max_packets_per_message;
  c.pktmaxsz = 0xEFFFFFFF;
  c.align = 3;  // 8-byte alignment of aggregated packets
  std::vector<uint8_t> out;
  put(out, c);
  answer(s, channel, out);
  s.rndis_initialized = true;
}

// The answer to a query: the data, or an empty vector with `*status` set.
std::vector<uint8_t> query_data(NetvspHost::State& s, uint32_t oid, uint32_t* status) {
  auto u32 = [](uint32_t v) {
    std::vector<uint8_t> d(4);
    std::memcpy(d.data(), &v, 4);
    return d;
  };
  *status = rndis::kStatusSuccess;
  switch (oid) {
    case rndis::kOid8023PermanentAddress:
    case rndis::kOid8023CurrentAddress:
      return {s.config.mac.begin(), s.config.mac.end()};
    case rndis::kOidGenMediaConnectStatus:
      return u32(s.link_up ? rndis::kMediaStateConnected : rndis::kMediaStateDisconnected);
    case rndis::kOidGenLinkSpeed:
      return u32(static_cast<uint32_t>(s.config.link_speed_bps / 100));
    // DPDK 24.11 takes the first as its MTU at probe and after mtu_set (doc/hardware.md §11.6).
    case rndis::kOidGenMaximumFrameSize:
      return u32(s.frame_max() - kEthHeaderLen);
    case rndis::kOidGenMaximumTotalSize:
      return u32(s.frame_max());
    case rndis::kOidGenVendorId:
      return u32(0x0000155d);  // vmswitch's, per OpenVMM
    case rndis::kOidGenHardwareStatus:
    case rndis::kOidGenMediaSupported:
    case rndis::kOidGenMediaInUse:
      return u32(0);  // ready; 802.3
    case rndis::kOidGenCurrentPacketFilter:
      return u32(s.packet_filter);
    case rndis::kOidGenRssCapabilities:
      return rss_capabilities(s, ndis::kRssCapsSizeRev2);
    case rndis::kOidTcpOffloadHardwareCaps:
      return offload_capabilities(s, sizeof(ndis::Offload));
    default:
      *status = rndis::kStatusNotSupported;
      return {};
  }
}

uint32_t set_oid(NetvspHost::State& s, uint32_t oid, std::span<const uint8_t> info) {
  switch (oid) {
    case rndis::kOidGenCurrentPacketFilter:
      if (info.size() < 4) return rndis::kStatusInvalidLength;
      std::memcpy(&s.packet_filter, info.data(), 4);
      // Under vfassoc_point=packet-filter the note goes before this SET's completion, so that
      // the guest attaches the VF before it starts it (DPDK 24.11.8 switches its data path
      // only there or once started; doc/hardware.md §11.9).
      send_due_notes(s);
      return rndis::kStatusSuccess;
    case rndis::kOidTcpOffloadParameters:
      // The host honours each packet's own request (per-packet info), so the switches only need
      // to be a well-formed object.
      if (info.size() < sizeof(ndis::ObjectHeader) || info[0] != ndis::kObjDefault)
        return rndis::kStatusInvalidData;
      return rndis::kStatusSuccess;
    case rndis::kOidGenRssParameters:
      return set_rss_parameters(s, info);
    default:
      return rndis::kStatusNotSupported;
  }
}

// The info buffer of a QUERY or SET request, or an empty span with `*ok` false.
std::span<const uint8_t> info_buffer(std::span<const uint8_t> msg, const rndis::QueryReq& req,
                                     bool* ok) {
  *ok = true;
  if (req.infobuflen == 0) return {};
  const uint64_t at = uint64_t{req.infobufoffset} + rndis::kInfoOffsetBase;
  if (at + req.infobuflen > msg.size()) {
    *ok = false;
    return {};
  }
  return msg.subspan(at, req.infobuflen);
}

}  // namespace

void handle_rndis_control(NetvspHost::State& s, unsigned channel, std::span<const uint8_t> msg) {
  if (msg.size() < sizeof(rndis::HaltReq))
    return drop_malformed(s, channel, "%zu-byte RNDIS control message", msg.size());
  rndis::HaltReq h;
  std::memcpy(&h, msg.data(), sizeof(h));
  if (h.len > msg.size() || h.len < sizeof(h))
    return drop_malformed(s, channel, "RNDIS message %#x says %u bytes, %zu given", h.type, h.len,
                          msg.size());
  msg = msg.first(h.len);
  if (!s.rxbuf_connected && h.type != rndis::kHaltMsg)
    return drop_malformed(
        s, channel, "RNDIS message %#x before the receive buffer (nowhere to answer)", h.type);
  ++s.counters.rndis_control;
  switch (h.type) {
    case rndis::kInitMsg: {
      rndis::InitReq req;
      if (msg.size() < sizeof(req)) break;
      std::memcpy(&req, msg.data(), sizeof(req));
      return initialize(s, channel, req);
    }
    case rndis::kQueryMsg:
    case rndis::kSetMsg: {
      rndis::QueryReq req;
      if (msg.size() < sizeof(req)) break;
      std::memcpy(&req, msg.data(), sizeof(req));
      bool ok;
      const auto info = info_buffer(msg, req, &ok);
      if (!ok) break;
      std::vector<uint8_t> out;
      if (h.type == rndis::kSetMsg) {
        const rndis::SetComp c{rndis::kSetMsg | rndis::kCompletionBit, sizeof(rndis::SetComp),
                               req.rid, set_oid(s, req.oid, info)};
        put(out, c);
      } else {
        rndis::QueryComp c{rndis::kQueryMsg | rndis::kCompletionBit, 0, req.rid, 0, 0, 0};
        const auto data = query_data(s, req.oid, &c.status);
        c.len = static_cast<uint32_t>(sizeof(c) + data.size());
        c.infobuflen = static_cast<uint32_t>(data.size());
        c.infobufoffset = data.empty() ? 0 : sizeof(c) - rndis::kInfoOffsetBase;
        put(out, c);
        out.insert(out.end(), data.begin(), data.end());
      }
      return answer(s, channel, out);
    }
    case rndis::kHaltMsg:  // no answer (DPDK relies on the NVS completion)
      s.rndis_initialized = false;
      s.packet_filter = 0;
      return;
    case rndis::kResetMsg: {
      std::vector<uint8_t> out;
      put(out, rndis::ResetComp{rndis::kResetMsg | rndis::kCompletionBit, sizeof(rndis::ResetComp),
                                rndis::kStatusSuccess, 0});
      return answer(s, channel, out);
    }
    case rndis::kKeepaliveMsg: {
      std::vector<uint8_t> out;
      put(out, rndis::SetComp{rndis::kKeepaliveMsg | rndis::kCompletionBit, sizeof(rndis::SetComp),
                              h.rid, rndis::kStatusSuccess});
      return answer(s, channel, out);
    }
    default:
      break;
  }
  --s.counters.rndis_control;
  drop_malformed(s, channel, "RNDIS control message %#x of %zu bytes", h.type, msg.size());
}

}  // namespace mana::emu::netvsc
