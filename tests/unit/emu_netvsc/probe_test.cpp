// SPDX-License-Identifier: BSD-3-Clause
// DPDK 22.11's probe against the host (doc/hardware.md §11.3-§11.6): versions, buffers, RNDIS
// control and its objects, and malformed guest packets.
#include <cstring>

#include "host_fixture.h"
#include "netvsc/ndis_format.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc::test {
namespace {

template <typename T>
std::span<const uint8_t> bytes(const T& v) {
  return {reinterpret_cast<const uint8_t*>(&v), sizeof(T)};
}

TEST_F(HostTest, ProbeAnswersEveryStepAsDpdkChecks) {
  start();
  EXPECT_EQ(guest->probe(), nvsp::kVersion61);
  EXPECT_EQ(host->nvsp_version(), nvsp::kVersion61);
  EXPECT_EQ(guest->rxbuf_section_size, 1808u);  // 256 + 1514 + 36, to 8 bytes (OpenVMM)
  EXPECT_EQ(guest->rxbuf_section_count, kRxbufLen / 1808);
  EXPECT_EQ(guest->chimney_section_size, 6144u);
  EXPECT_EQ(guest->agg_pkts, 8u);
  EXPECT_EQ(guest->agg_align, 8u);
  EXPECT_EQ(guest->mac, kMac);
  EXPECT_EQ(guest->max_queues, 8u);
  EXPECT_EQ(host->counters().malformed, 0u);
  EXPECT_EQ(host->counters().rndis_control, 4u);  // INIT, SET filter, QUERY MAC, QUERY RSS caps
  EXPECT_TRUE(guest->notes.empty());
  // Every RNDIS answer's receive section came back.
  EXPECT_EQ(host->counters().pending_sends, 0u);
}

TEST_F(HostTest, RepliesArePaddedToTheVersionsPacketSize) {
  start();
  ASSERT_EQ(guest->probe(), nvsp::kVersion61);
  // Before INIT the session's packet size is version 1's (28 bytes), from 6.1 on 40 (OpenVMM).
  host->reset();
  const nvsp::Init init{nvsp::kTypeInit, nvsp::kVersion61, nvsp::kVersion61, {}};
  EXPECT_EQ(guest->nvs_execute(bytes(init), nvsp::kTypeInitResp, 16).size(), 28u);
  const nvsp::BufferConn chim{
      nvsp::kTypeChimConn, mem.send_buffer_gpadl(), nvsp::kChimneySignature, {}};
  EXPECT_EQ(guest->nvs_execute(bytes(chim), nvsp::kTypeChimConnResp, 12).size(), 40u);
  const nvsp::SubchReq req{nvsp::kTypeSubchannel, nvsp::kSubchannelAllocate, 1, {}};
  auto r = guest->nvs_execute(bytes(req), nvsp::kTypeSubchannel, sizeof(nvsp::SubchResp));
  EXPECT_EQ(r.size(), 40u);  // DPDK needs all 40 bytes of SUBCH_RESP
}

TEST_F(HostTest, OlderHostNegotiatesDown) {
  config.max_nvsp_version = nvsp::kVersion5;
  start();
  EXPECT_EQ(guest->probe(), nvsp::kVersion5);
  EXPECT_EQ(guest->max_queues, 8u);
}

TEST_F(HostTest, OffloadCapabilitiesPassDpdkChecks) {
  start_and_probe();
  ndis::Offload in{};
  in.hdr = {ndis::kObjOffload, 3, sizeof(ndis::Offload)};
  auto r = guest->rndis_query(rndis::kOidTcpOffloadHardwareCaps, bytes(in), sizeof(ndis::Offload));
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), sizeof(ndis::Offload));
  ndis::Offload o;
  std::memcpy(&o, r->data(), sizeof(o));
  EXPECT_EQ(o.hdr.type, ndis::kObjOffload);
  EXPECT_EQ(o.hdr.rev, 3);
  EXPECT_EQ(o.hdr.size, 156);
  // What hn_rndis_get_offload needs for IPv4/TCP/UDP checksums and TSO.
  EXPECT_EQ(o.csum.ip4_txcsum & 0x101u, 0x101u);
  EXPECT_EQ(o.csum.ip4_txcsum & 0x14u, 0x14u);
  EXPECT_EQ(o.csum.ip6_txcsum & 0x15u, 0x15u);
  EXPECT_EQ(o.csum.ip6_txcsum & 0x41u, 0x41u);
  EXPECT_EQ(o.lsov2.ip4_encap & ndis::kEncap8023, ndis::kEncap8023);
  EXPECT_EQ(o.lsov2.ip6_opts & 0x5u, 0x5u);
  // hn_rndis_conf_offload's SET.
  uint8_t params[28] = {ndis::kObjDefault, 3, 28, 0};
  EXPECT_TRUE(guest->rndis_set(rndis::kOidTcpOffloadParameters, params));
}

TEST_F(HostTest, LinkQueriesAndIndications) {
  config.link_speed_bps = 200'000'000'000ull;
  start_and_probe();
  auto st = guest->rndis_query(rndis::kOidGenMediaConnectStatus, {}, 4);
  ASSERT_TRUE(st && st->size() == 4);
  EXPECT_EQ((*st)[0], rndis::kMediaStateConnected);
  auto sp = guest->rndis_query(rndis::kOidGenLinkSpeed, {}, 4);
  ASSERT_TRUE(sp && sp->size() == 4);
  uint32_t speed;
  std::memcpy(&speed, sp->data(), 4);
  EXPECT_EQ(speed, 2'000'000'000u);  // 100 bps units
  host->set_link(false);
  guest->poll_all();
  EXPECT_EQ(guest->indications, std::vector<uint32_t>{rndis::kStatusMediaDisconnect});
  st = guest->rndis_query(rndis::kOidGenMediaConnectStatus, {}, 4);
  EXPECT_EQ((*st)[0], rndis::kMediaStateDisconnected);
}

TEST_F(HostTest, MaximumFrameSizeIsTheSessionsNdisMtu) {
  // DPDK 24.11 takes OID_GEN_MAXIMUM_FRAME_SIZE as its MTU at probe and after mtu_set, which
  // renegotiates with NDIS_CONF carrying the new MTU + 14; outside 1514..9216 the vmswitch takes
  // 1514 (OpenVMM; doc/hardware.md §11.11).
  for (const auto& [ndis_mtu, mtu] :
       {std::pair{1514u, 1500u}, std::pair{9014u, 9000u}, std::pair{9216u, 9202u},
        std::pair{9300u, 1500u}, std::pair{1000u, 1500u}}) {
    start();
    guest->ndis_mtu = ndis_mtu;
    ASSERT_EQ(guest->probe(), nvsp::kVersion61) << ndis_mtu;
    for (const auto& [oid, expected] : {std::pair{rndis::kOidGenMaximumFrameSize, mtu},
                                        std::pair{rndis::kOidGenMaximumTotalSize, mtu + 14}}) {
      const auto m = guest->rndis_query(oid, {}, 4);
      ASSERT_TRUE(m && m->size() == 4) << ndis_mtu;
      uint32_t value;
      std::memcpy(&value, m->data(), 4);
      EXPECT_EQ(value, expected) << "NDIS_CONF mtu " << ndis_mtu << ", OID " << std::hex << oid;
    }
  }
}

TEST_F(HostTest, UnknownOidIsNotSupportedWithoutData) {
  start_and_probe();
  EXPECT_FALSE(guest->rndis_query(0x00010117, {}, 64).has_value());
  EXPECT_FALSE(guest->rndis_set(0x00010117, {}));
  EXPECT_EQ(host->counters().malformed, 0u);
}

TEST_F(HostTest, MalformedGuestPacketsAreCountedAndDropped) {
  start();
  const uint8_t two[2] = {1, 0};
  const nvsp::SubchReq early{nvsp::kTypeSubchannel, 1, 1, {}};
  host->on_guest_packet(0, {kPacketInband, kFlagCompletionRequested, 0, bytes(early), {}});
  EXPECT_EQ(host->counters().malformed, 1u) << "NVS request before INIT";
  ASSERT_EQ(guest->probe(), nvsp::kVersion61);
  const auto before = host->counters().malformed;
  uint32_t bad_type = 999;
  host->on_guest_packet(0, {kPacketInband, 0, 0, two, {}});
  host->on_guest_packet(0, {kPacketInband, kFlagCompletionRequested, 0, bytes(bad_type), {}});
  host->on_guest_packet(0, {0x5, 0, 0, bytes(bad_type), {}});
  host->on_guest_packet(5, {kPacketInband, 0, 0, bytes(bad_type), {}});  // not offered
  const nvsp::RndisAck ack{nvsp::kTypeRndisAck, 1, {}};
  host->on_guest_packet(0, {kPacketCompletion, 0, 7, bytes(ack), {}});  // section 7 not held
  const GpaRange outside{64, 0, 0x10};
  const nvsp::Rndis ctl{nvsp::kTypeRndis, nvsp::kRndisControl, nvsp::kNoChimneySection, 0, {}};
  host->on_guest_packet(0, {kPacketGpa, kFlagCompletionRequested, 0, bytes(ctl), {&outside, 1}});
  EXPECT_EQ(host->counters().malformed, before + 6);
  EXPECT_TRUE(hooks.ch(0).packets.empty()) << "a dropped request gets no reply";
  // A data packet is completed with a failure status so that the guest frees its descriptor.
  const nvsp::Rndis data{nvsp::kTypeRndis, nvsp::kRndisData, 100000, 64, {}};
  host->on_guest_packet(0, {kPacketInband, kFlagCompletionRequested, 42, bytes(data), {}});
  EXPECT_EQ(host->counters().malformed, before + 7);
  guest->process_events(0);
  ASSERT_EQ(guest->tx_done.size(), 1u);
  EXPECT_EQ(guest->tx_done[0].xact_id, 42u);
  EXPECT_EQ(guest->tx_done[0].status, nvsp::kStatusFailed);
  EXPECT_TRUE(hooks.frames.empty());
  // The session still works.
  auto mac = guest->rndis_query(rndis::kOid8023PermanentAddress, {}, 6);
  ASSERT_TRUE(mac.has_value());
  EXPECT_EQ(mac->size(), 6u);
}

TEST_F(HostTest, RxbufConnWithAnotherGpadlFails) {
  start();
  const nvsp::Init init{nvsp::kTypeInit, nvsp::kVersion61, nvsp::kVersion61, {}};
  guest->nvs_execute(bytes(init), nvsp::kTypeInitResp, 16);
  nvsp::NdisConf conf{};
  conf.type = nvsp::kTypeNdisConf;
  conf.mtu = 1514;
  guest->nvs_send(bytes(conf));
  const nvsp::BufferConn rx{nvsp::kTypeRxbufConn, 0x999, nvsp::kRxbufSignature, {}};
  auto r = guest->nvs_execute(bytes(rx), nvsp::kTypeRxbufConnResp, 28);
  ASSERT_EQ(r.size(), 40u);
  uint32_t status;
  std::memcpy(&status, r.data() + 4, 4);
  EXPECT_EQ(status, nvsp::kStatusFailed);
}

}  // namespace
}  // namespace mana::emu::netvsc::test
