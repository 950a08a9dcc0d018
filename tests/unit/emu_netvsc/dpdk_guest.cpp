// SPDX-License-Identifier: BSD-3-Clause
#include "dpdk_guest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "netvsc/ndis_format.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc::test {
namespace {

template <typename T>
std::span<const uint8_t> bytes(const T& v) {
  return {reinterpret_cast<const uint8_t*>(&v), sizeof(T)};
}
template <typename T>
T load(std::span<const uint8_t> b, size_t at = 0) {
  T v{};
  std::memcpy(&v, b.data() + at, std::min(sizeof(T), b.size() - std::min(b.size(), at)));
  return v;
}
template <typename T>
void append(std::vector<uint8_t>& out, const T& v) {
  auto b = bytes(v);
  out.insert(out.end(), b.begin(), b.end());
}

// The RNDIS packet message DPDK's hn_encap builds: HASHVAL (queue id) always, then CSUM or VLAN.
std::vector<uint8_t> encap(unsigned queue, std::span<const uint8_t> frame,
                           std::optional<uint32_t> csum, std::optional<uint32_t> vlan,
                           bool with_data, std::optional<uint32_t> lso = {}) {
  std::vector<uint8_t> ppi;
  auto add = [&](uint32_t type, uint32_t v) {
    append(ppi, rndis::PacketInfo{16, type, 12});
    append(ppi, v);
  };
  add(rndis::kPpiHashValue, queue);
  if (vlan) add(rndis::kPpiVlan, *vlan);
  if (lso)
    add(rndis::kPpiLso, *lso);
  else if (csum)
    add(rndis::kPpiChecksum, *csum);
  rndis::PacketMsg m{};
  m.type = rndis::kPacketMsg;
  const uint32_t hlen = sizeof(m) + static_cast<uint32_t>(ppi.size());
  m.len = hlen + static_cast<uint32_t>(frame.size());
  m.dataoffset = hlen - rndis::kPacketOffsetBase;
  m.datalen = static_cast<uint32_t>(frame.size());
  m.pktinfooffset = sizeof(m) - rndis::kPacketOffsetBase;
  m.pktinfolen = static_cast<uint32_t>(ppi.size());
  std::vector<uint8_t> out;
  append(out, m);
  out.insert(out.end(), ppi.begin(), ppi.end());
  if (with_data) out.insert(out.end(), frame.begin(), frame.end());
  return out;
}

}  // namespace

std::vector<uint8_t> DpdkGuest::nvs_execute(std::span<const uint8_t> req, uint32_t expected,
                                            size_t resp_len) {
  if (poll_between) host_.poll();
  host_.on_guest_packet(0, {kPacketInband, kFlagCompletionRequested, 0, req, {}});
  if (poll_between) host_.poll();
  FakeChannel& ch = hooks_.ch(0);
  while (!ch.packets.empty()) {
    HostPacket p = std::move(ch.packets.front());
    ch.packets.pop_front();
    if (p.body.size() > 256) {  // NVS_RESPSIZE_MAX: the ring read fails
      ADD_FAILURE() << "NVS reply of " << p.body.size() << " bytes";
      return {};
    }
    if (p.nvs_type() == nvsp::kTypeRndis) {  // acked and dropped
      if (p.type == kPacketRxbuf) ack(0, p.xact_id);
      continue;
    }
    if (p.nvs_type() == nvsp::kTypeTxTable) continue;
    if (p.nvs_type() != expected) {
      ADD_FAILURE() << "unexpected NVS resp " << p.nvs_type() << ", expect " << expected;
      return {};
    }
    if (p.body.size() < resp_len) {
      ADD_FAILURE() << "invalid NVS resp len " << p.body.size() << " (expect " << resp_len << ")";
      return {};
    }
    return p.body;
  }
  ADD_FAILURE() << "no NVS reply of type " << expected;  // DPDK would spin forever
  return {};
}

void DpdkGuest::nvs_send(std::span<const uint8_t> req) {
  host_.on_guest_packet(0, {kPacketInband, 0, 0, req, {}});
}

uint32_t DpdkGuest::probe() {
  uint32_t version = 0;
  for (uint32_t v : {nvsp::kVersion61, nvsp::kVersion6, nvsp::kVersion5, nvsp::kVersion4,
                     nvsp::kVersion2, nvsp::kVersion1}) {
    nvsp::Init init{nvsp::kTypeInit, v, v, {}};
    auto r = nvs_execute(bytes(init), nvsp::kTypeInitResp, sizeof(nvsp::InitResp));
    if (r.empty()) return 0;
    if (load<nvsp::InitResp>(r).status == nvsp::kStatusOk) {
      version = v;
      break;
    }
  }
  if (version == 0) return 0;
  const bool v630 = version > nvsp::kVersion4;
  if (version >= nvsp::kVersion2) {
    nvsp::NdisConf conf{};
    conf.type = nvsp::kTypeNdisConf;
    conf.mtu = ndis_mtu;
    conf.caps = nvsp::kNdisConfVlan | (version >= nvsp::kVersion5 ? nvsp::kNdisConfSriov : 0);
    nvs_send(bytes(conf));
  }
  nvs_send(bytes(nvsp::NdisInit{nvsp::kTypeNdisInit, 6, v630 ? 30u : 1u, {}}));
  nvsp::BufferConn rxconn{
      nvsp::kTypeRxbufConn, mem_.receive_buffer_gpadl(), nvsp::kRxbufSignature, {}};
  auto r = nvs_execute(bytes(rxconn), nvsp::kTypeRxbufConnResp, sizeof(nvsp::RxbufConnResp));
  if (r.empty()) return 0;
  auto rr = load<nvsp::RxbufConnResp>(r);
  EXPECT_EQ(rr.status, nvsp::kStatusOk);
  EXPECT_EQ(rr.nsect, 1u) << "nvs rxbuf response num sections";
  if (rr.status != nvsp::kStatusOk || rr.nsect != 1) return 0;
  rxbuf_section_count = rr.sect.slotcnt;
  rxbuf_section_size = rr.sect.slotsz;
  nvsp::BufferConn chim{nvsp::kTypeChimConn, mem_.send_buffer_gpadl(), nvsp::kChimneySignature, {}};
  r = nvs_execute(bytes(chim), nvsp::kTypeChimConnResp, sizeof(nvsp::ChimConnResp));
  if (r.empty()) return 0;
  auto cr = load<nvsp::ChimConnResp>(r);
  EXPECT_EQ(cr.status, nvsp::kStatusOk);
  EXPECT_TRUE(cr.sectsz != 0 && cr.sectsz % 4 == 0) << "invalid chimney section size " << cr.sectsz;
  if (cr.status != nvsp::kStatusOk || cr.sectsz == 0 || cr.sectsz % 4) return 0;
  chimney_section_size = cr.sectsz;

  // RNDIS INITIALIZE (hn_rndis_init): 48 bytes of completion read.
  rndis::InitReq init{rndis::kInitMsg, sizeof(rndis::InitReq), ++next_rid_, 1, 0, 0x4000};
  std::vector<uint8_t> msg(sizeof(init));
  std::memcpy(msg.data(), &init, sizeof(init));
  auto c = rndis_exec(msg);
  if (c.size() < 48) return 0;
  auto ic = load<rndis::InitComp>(c);
  EXPECT_EQ(ic.type, rndis::kInitMsg | rndis::kCompletionBit);
  EXPECT_EQ(ic.rid, init.rid);
  EXPECT_EQ(ic.status, rndis::kStatusSuccess);
  if (ic.status != rndis::kStatusSuccess) return 0;
  agg_pkts = ic.pktmaxcnt;
  agg_align = std::max(1u << ic.align, 4u);

  const uint32_t filter = 0;
  rndis_set(rndis::kOidGenCurrentPacketFilter, bytes(filter));  // result ignored
  auto m = rndis_query(rndis::kOid8023PermanentAddress, {}, 6);
  if (!m) return 0;
  std::memcpy(mac.data(), m->data(), std::min<size_t>(6, m->size()));
  if (version < nvsp::kVersion5) return version;

  // hn_rndis_query_rsscaps.
  ndis::RssCaps in{};
  in.hdr = {ndis::kObjRssCaps, 2, ndis::kRssCapsSizeRev2};
  auto rc = rndis_query(rndis::kOidGenRssCapabilities, bytes(in).first(ndis::kRssCapsSizeRev2),
                        ndis::kRssCapsSizeRev2);
  if (!rc) return 0;
  auto caps = load<ndis::RssCaps>(*rc);
  EXPECT_EQ(caps.hdr.type, ndis::kObjRssCaps);
  EXPECT_GE(caps.hdr.rev, 1);
  EXPECT_LE(caps.hdr.size, ndis::kRssCapsSizeRev2);
  EXPECT_GE(caps.hdr.size, 16);
  EXPECT_NE(caps.nrxr, 0u);
  if (caps.hdr.size == ndis::kRssCapsSizeRev2 && caps.hdr.rev >= 2) {
    EXPECT_LE(caps.nind, 128);
  }
  max_queues = std::min<uint32_t>({caps.nrxr, caps.nind, 64});
  return version;
}

std::vector<uint8_t> DpdkGuest::rndis_exec(std::vector<uint8_t> msg, bool expect_reply) {
  EXPECT_LE(msg.size(), 4096u);
  const uint64_t addr = mem_.alloc(4096);
  std::memcpy(mem_.at(addr), msg.data(), msg.size());
  const GpaRange range{static_cast<uint32_t>(msg.size()), 0, addr / 4096};
  const nvsp::Rndis nvs{nvsp::kTypeRndis, nvsp::kRndisControl, nvsp::kNoChimneySection, 0, {}};
  pending_rid_ = load<rndis::HaltReq>(msg).rid;
  pending_rndis_.clear();
  host_.on_guest_packet(0, {kPacketGpa, kFlagCompletionRequested, 0, bytes(nvs), {&range, 1}});
  if (!expect_reply) {
    process_events(0);
    return {};
  }
  for (int pass = 0; pass < 4 && pending_rndis_.empty(); ++pass) {
    process_events(0);
    if (pending_rndis_.empty()) host_.poll();
  }
  if (pending_rndis_.empty())
    ADD_FAILURE() << "RNDIS response timed out (rid " << pending_rid_ << ")";
  pending_rid_ = 0;
  return pending_rndis_;
}

// A QUERY or SET request with its info buffer right after the header (hn_rndis_query/_set).
std::vector<uint8_t> DpdkGuest::oid_request(uint32_t type, uint32_t oid,
                                            std::span<const uint8_t> info, uint32_t* rid) {
  *rid = ++next_rid_;
  const uint32_t n = static_cast<uint32_t>(info.size());
  const rndis::QueryReq req{type, static_cast<uint32_t>(sizeof(rndis::QueryReq)) + n, *rid, oid,
                            n,    sizeof(rndis::QueryReq) - rndis::kInfoOffsetBase,   0};
  std::vector<uint8_t> msg;
  append(msg, req);
  msg.insert(msg.end(), info.begin(), info.end());
  return rndis_exec(msg);
}

std::optional<std::vector<uint8_t>> DpdkGuest::rndis_query(uint32_t oid,
                                                           std::span<const uint8_t> in,
                                                           uint32_t odlen) {
  uint32_t rid;
  auto c = oid_request(rndis::kQueryMsg, oid, in, &rid);
  const uint32_t comp_len = sizeof(rndis::QueryComp) + odlen;
  c.resize(std::max<size_t>(c.size(), sizeof(rndis::QueryComp)));
  auto qc = load<rndis::QueryComp>(c);
  if (qc.type != (rndis::kQueryMsg | rndis::kCompletionBit) || qc.rid != rid) {
    ADD_FAILURE() << "RNDIS query " << std::hex << oid << ": completion type " << qc.type << " rid "
                  << qc.rid;
    return std::nullopt;
  }
  if (qc.status != rndis::kStatusSuccess) return std::nullopt;
  if (qc.infobuflen == 0 || qc.infobufoffset == 0) return std::vector<uint8_t>{};
  const uint32_t ofs = qc.infobufoffset + rndis::kInfoOffsetBase;
  if (ofs < sizeof(rndis::QueryComp) || ofs + qc.infobuflen > comp_len) {
    ADD_FAILURE() << "RNDIS query invalid comp ib off/len " << qc.infobufoffset << "/"
                  << qc.infobuflen << " for a " << odlen << "-byte output";
    return std::nullopt;
  }
  return std::vector<uint8_t>(c.begin() + ofs, c.begin() + ofs + std::min(qc.infobuflen, odlen));
}

bool DpdkGuest::rndis_set(uint32_t oid, std::span<const uint8_t> data) {
  uint32_t rid;
  auto c = oid_request(rndis::kSetMsg, oid, data, &rid);
  c.resize(std::max<size_t>(c.size(), sizeof(rndis::SetComp)));
  auto sc = load<rndis::SetComp>(c);
  EXPECT_EQ(sc.type, rndis::kSetMsg | rndis::kCompletionBit);
  EXPECT_EQ(sc.rid, rid);
  return sc.type == (rndis::kSetMsg | rndis::kCompletionBit) && sc.rid == rid &&
         sc.status == rndis::kStatusSuccess;
}

bool DpdkGuest::configure_queues(unsigned queues, const std::array<uint8_t, 40>& key,
                                 uint32_t hash_types) {
  if (queues > 1) {
    nvsp::SubchReq req{nvsp::kTypeSubchannel, nvsp::kSubchannelAllocate, queues - 1, {}};
    auto r = nvs_execute(bytes(req), nvsp::kTypeSubchannel, sizeof(nvsp::SubchResp));
    if (r.empty()) return false;
    auto sr = load<nvsp::SubchResp>(r);
    if (sr.status != nvsp::kStatusOk || sr.nsubch != queues - 1) return false;
  }
  struct {
    ndis::RssParams prm;
    uint32_t ind[128];
    uint8_t key[40];
  } rssp{};
  rssp.prm.hdr = {ndis::kObjRssParams, 2, sizeof(ndis::RssParams)};
  rssp.prm.hash = hash_types | ndis::kHashFunctionToeplitz;
  rssp.prm.indsize = sizeof(rssp.ind);
  rssp.prm.indoffset = offsetof(decltype(rssp), ind);
  rssp.prm.keysize = 40;
  rssp.prm.keyoffset = offsetof(decltype(rssp), key);
  for (unsigned i = 0; i < 128; ++i) rssp.ind[i] = i % queues;
  std::memcpy(rssp.key, key.data(), 40);
  rssp.prm.flags = ndis::kRssFlagDisable;
  if (!rndis_set(rndis::kOidGenRssParameters, bytes(rssp))) return false;
  rssp.prm.flags = 0;
  return rndis_set(rndis::kOidGenRssParameters, bytes(rssp));
}

void DpdkGuest::set_datapath(uint32_t path) {
  nvs_send(bytes(nvsp::Datapath{nvsp::kTypeSetDatapath, path, {}}));
}

void DpdkGuest::send_chimney(unsigned channel, uint32_t section,
                             const std::vector<std::vector<uint8_t>>& frames, uint64_t xact_id,
                             std::span<const uint32_t> csum_info) {
  uint8_t* base = mem_.sendbuf.data() + size_t{section} * chimney_section_size;
  uint32_t size = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    auto msg = encap(channel, frames[i],
                     i < csum_info.size() ? std::optional<uint32_t>(csum_info[i]) : std::nullopt,
                     std::nullopt, true);
    // hn_try_txagg: a packet followed by another grows by the padding to the alignment.
    if (i + 1 < frames.size()) {
      const uint32_t padded =
          (static_cast<uint32_t>(msg.size()) + agg_align - 1) & ~(agg_align - 1);
      std::memcpy(msg.data() + 4, &padded, 4);
      msg.resize(padded, 0);
    }
    std::memcpy(base + size, msg.data(), msg.size());
    size += static_cast<uint32_t>(msg.size());
  }
  const nvsp::Rndis nvs{nvsp::kTypeRndis, nvsp::kRndisData, section, size, {}};
  host_.on_guest_packet(channel,
                        {kPacketInband, kFlagCompletionRequested, xact_id, bytes(nvs), {}});
}

void DpdkGuest::send_gpa(unsigned channel, std::span<const uint8_t> frame, uint64_t xact_id,
                         std::optional<uint32_t> csum_info, std::optional<uint32_t> vlan_info,
                         uint32_t data_page_offset, std::optional<uint32_t> lso_info) {
  auto hdr = encap(channel, frame, csum_info, vlan_info, false, lso_info);
  std::vector<GpaRange> ranges;
  const uint64_t h = mem_.alloc(static_cast<uint32_t>(hdr.size()), 128);
  std::memcpy(mem_.at(h), hdr.data(), hdr.size());
  ranges.push_back({static_cast<uint32_t>(hdr.size()), static_cast<uint32_t>(h % 4096), h / 4096});
  // The mbuf data, split at 4 KiB pages (hn_fill_sg).
  const uint64_t d = mem_.alloc(static_cast<uint32_t>(frame.size()), data_page_offset);
  std::memcpy(mem_.at(d), frame.data(), frame.size());
  uint64_t at = d;
  uint32_t left = static_cast<uint32_t>(frame.size());
  while (left > 0) {
    const uint32_t n = std::min<uint32_t>(left, 4096 - at % 4096);
    ranges.push_back({n, static_cast<uint32_t>(at % 4096), at / 4096});
    at += n;
    left -= n;
  }
  const nvsp::Rndis nvs{nvsp::kTypeRndis, nvsp::kRndisData, nvsp::kNoChimneySection, 0, {}};
  host_.on_guest_packet(channel,
                        {kPacketGpa, kFlagCompletionRequested, xact_id, bytes(nvs), ranges});
}

void DpdkGuest::ack(unsigned channel, uint64_t section) {
  const nvsp::RndisAck a{nvsp::kTypeRndisAck, nvsp::kStatusOk, {}};
  host_.on_guest_packet(channel, {kPacketCompletion, 0, section, bytes(a), {}});
}

void DpdkGuest::process_events(unsigned channel) {
  FakeChannel* ch = hooks_.channels.at(channel).get();
  if (!ch) return;
  while (!ch->packets.empty()) {
    HostPacket p = std::move(ch->packets.front());
    ch->packets.pop_front();
    if (p.type == kPacketCompletion) {
      if (p.nvs_type() == nvsp::kTypeRndisAck && p.xact_id == 0) continue;  // control packets
      if (p.nvs_type() == nvsp::kTypeRndisAck && p.body.size() >= 8)
        tx_done.push_back({channel, p.xact_id, load<uint32_t>(p.body, 4)});
      else
        other_completions.push_back(std::move(p));
    } else if (p.type == kPacketInband) {
      notes.push_back(std::move(p));
    } else {  // hn_nvs_handle_rxbuf
      EXPECT_EQ(p.nvs_type(), nvsp::kTypeRndis);
      EXPECT_EQ(p.xfer_pageset_id, nvsp::kRxbufSignature) << "invalid rxbuf_id";
      EXPECT_LT(p.xact_id, rxbuf_section_count) << "invalid rxbuf section id";
      for (const RxbufRange& r : p.ranges) {
        ASSERT_LE(uint64_t{r.offset} + r.len, mem_.rxbuf.size()) << "RNDIS msg overflow";
        ASSERT_NE(r.len, 0u);
        rndis_receive(channel, p.xact_id, {mem_.rxbuf.data() + r.offset, r.len});
      }
      if (hold_sections)
        held.emplace_back(channel, p.xact_id);
      else
        ack(channel, p.xact_id);
    }
  }
}

void DpdkGuest::rndis_receive(unsigned channel, uint64_t section, std::span<const uint8_t> msg) {
  const auto h = load<rndis::MsgHeader>(msg);
  if (h.type == rndis::kIndicateStatusMsg) {
    indications.push_back(load<rndis::StatusMsg>(msg).status);
    return;
  }
  if (h.type & rndis::kCompletionBit) {  // hn_rndis_receive_response
    ASSERT_GE(msg.size(), 12u) << "missing RNDIS header";
    ASSERT_GE(msg.size(), h.len) << "truncated RNDIS response";
    if (load<uint32_t>(msg, 8) == pending_rid_) {
      pending_rndis_.assign(msg.begin(), msg.end());
      notes_at_reply = notes.size();
    }
    return;
  }
  ASSERT_EQ(h.type, rndis::kPacketMsg) << "unexpected RNDIS message";
  // hn_rndis_rx_data's checks.
  const auto m = load<rndis::PacketMsg>(msg);
  ASSERT_GE(msg.size(), sizeof(m));
  ASSERT_GE(msg.size(), m.len) << "truncated RNDIS from host";
  ASSERT_GE(m.len, m.datalen + m.oobdatalen + m.pktinfolen);
  ASSERT_NE(m.datalen, 0u);
  ASSERT_GE(m.dataoffset, 36u);
  if (m.pktinfooffset > 0) {
    ASSERT_GE(m.pktinfooffset, 36u);
    ASSERT_EQ(m.pktinfooffset % 4, 0u);
  }
  const uint32_t data_off = m.dataoffset + 8, ppi_off = m.pktinfooffset + 8;
  ASSERT_LE(data_off + m.datalen, m.len);
  ASSERT_GE(m.datalen, 14u);
  RxFrame f{channel, section, {msg.begin() + data_off, msg.begin() + data_off + m.datalen},
            {},      {},      {}};
  uint32_t left = m.pktinfolen, at = ppi_off;
  while (left != 0) {  // hn_rndis_rxinfo
    ASSERT_GE(left, 12u);
    const auto pi = load<rndis::PacketInfo>(msg, at);
    ASSERT_GE(left, pi.size);
    ASSERT_EQ(pi.size % 4, 0u);
    ASSERT_GE(pi.size, pi.offset);
    ASSERT_GE(pi.size - pi.offset, 4u);
    const uint32_t v = load<uint32_t>(msg, at + pi.offset);
    if (pi.type == rndis::kPpiChecksum) f.csum_info = v;
    if (pi.type == rndis::kPpiHashValue) f.hash_value = v;
    if (pi.type == rndis::kPpiHashInfo) f.hash_info = v;
    left -= pi.size;
    at += pi.size;
  }
  rx.push_back(std::move(f));
}

void DpdkGuest::poll_all() {
  host_.poll();
  for (unsigned c = 0; c < hooks_.channels.size(); ++c) process_events(c);
}

std::vector<uint8_t> tcp_frame(const std::array<uint8_t, 6>& dst, uint16_t sport, uint16_t dport,
                               uint32_t len) {
  std::vector<uint8_t> f(len, 0);
  std::memcpy(f.data(), dst.data(), 6);
  const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x99};
  std::memcpy(f.data() + 6, src, 6);
  f[12] = 0x08;  // IPv4
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  const uint16_t tot = static_cast<uint16_t>(len - 14);
  ip[2] = tot >> 8;
  ip[3] = tot & 0xff;
  ip[8] = 64;
  ip[9] = 6;  // TCP
  const uint8_t sa[4] = {10, 0, 0, 1}, da[4] = {10, 0, 0, 2};
  std::memcpy(ip + 12, sa, 4);
  std::memcpy(ip + 16, da, 4);
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += (ip[i] << 8) | ip[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  const uint16_t csum = static_cast<uint16_t>(~sum);
  ip[10] = csum >> 8;
  ip[11] = csum & 0xff;
  uint8_t* tcp = ip + 20;
  tcp[0] = sport >> 8;
  tcp[1] = sport & 0xff;
  tcp[2] = dport >> 8;
  tcp[3] = dport & 0xff;
  tcp[12] = 5 << 4;
  for (uint32_t i = 54; i < len; ++i) f[i] = static_cast<uint8_t>(i);
  return f;
}

}  // namespace mana::emu::netvsc::test
