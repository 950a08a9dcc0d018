// SPDX-License-Identifier: BSD-3-Clause
// VF association and the data path (doc/hardware.md §11.9), and reset.
#include <cstring>

#include "host_fixture.h"
#include "netvsc/nvsp_format.h"

namespace mana::emu::netvsc::test {
namespace {

const std::array<uint8_t, 6> kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct Note {
  uint32_t type, a, b;
};
Note note(const HostPacket& p) {
  Note n{};
  std::memcpy(&n, p.body.data(), std::min(sizeof(n), p.body.size()));
  return n;
}

// Probe and start, a VF with `serial` announced, the guest's data path on it, then the VF removed.
void remove_vf_in_use(NetvspHost& host, DpdkGuest& guest, uint32_t serial) {
  host.set_vf_available(true, serial);
  guest.poll_all();
  guest.set_datapath(nvsp::kDatapathVf);
  guest.notes.clear();
  host.set_vf_available(false, serial);
}

TEST_F(HostTest, VfAssocWaitsForRndisAndNeverInterleavesWithNvsReplies) {
  start();
  host->set_vf_available(true, 7);
  guest->poll_between = true;  // the device thread polls around every request
  ASSERT_EQ(guest->probe(), nvsp::kVersion61);
  guest->poll_all();
  ASSERT_EQ(guest->notes.size(), 1u);
  const Note n = note(guest->notes[0]);
  EXPECT_EQ(n.type, nvsp::kTypeVfAssoc);
  EXPECT_EQ(n.a, 1u);
  EXPECT_EQ(n.b, 7u);
  EXPECT_TRUE(guest->notes[0].completion_requested);
  EXPECT_EQ(guest->notes[0].xact_id, 0x8000000000000000ull);
  EXPECT_EQ(host->counters().vfassoc_sent, 1u);
  // DPDK never completes it; a client that does is not an error.
  host->on_guest_packet(0, {kPacketCompletion, 0, 0x8000000000000000ull, {}, {}});
  EXPECT_EQ(host->counters().malformed, 0u);
}

TEST_F(HostTest, SetDatapathSteersUnicastToTheVfAndKeepsGroupFramesSynthetic) {
  start_and_probe();
  host->set_vf_available(true, 1);
  guest->poll_all();
  const auto unicast = tcp_frame(kMac, 1, 2);
  const auto broadcast = tcp_frame(kBroadcast, 1, 2);
  EXPECT_FALSE(host->steer_to_vf(unicast)) << "before SET_DATAPATH";
  guest->set_datapath(nvsp::kDatapathVf);
  EXPECT_TRUE(host->data_path_on_vf());
  EXPECT_EQ(hooks.switches, std::vector<bool>{true});
  EXPECT_TRUE(host->steer_to_vf(unicast));
  EXPECT_FALSE(host->steer_to_vf(broadcast));
  guest->poll_all();
  EXPECT_TRUE(guest->other_completions.empty()) << "DPDK's SET_DATAPATH asks for no completion";
  guest->set_datapath(nvsp::kDatapathSynthetic);
  EXPECT_FALSE(host->steer_to_vf(unicast));
  EXPECT_EQ(hooks.switches, (std::vector<bool>{true, false}));
  EXPECT_EQ(host->counters().datapath_to_vf, 1u);
  EXPECT_EQ(host->counters().datapath_to_synthetic, 1u);
}

TEST_F(HostTest, GroupFramesFollowTheVfWhenConfigured) {
  config.group_frames_synthetic = false;
  start_and_probe();
  host->set_vf_available(true, 1);
  guest->set_datapath(nvsp::kDatapathVf);
  EXPECT_TRUE(host->steer_to_vf(tcp_frame(kBroadcast, 1, 2)));
}

TEST_F(HostTest, SetDatapathCompletionWhenTheHostAlwaysCompletes) {
  config.set_datapath_completion = SetDatapathCompletion::kAlways;
  start_and_probe();
  host->set_vf_available(true, 1);
  guest->set_datapath(nvsp::kDatapathVf);
  guest->poll_all();
  EXPECT_EQ(guest->other_completions.size(), 1u);
}

TEST_F(HostTest, SetDatapathToAMissingVfStaysSynthetic) {
  start_and_probe();
  guest->set_datapath(nvsp::kDatapathVf);
  EXPECT_FALSE(host->data_path_on_vf());
  EXPECT_TRUE(hooks.switches.empty());
  EXPECT_FALSE(host->steer_to_vf(tcp_frame(kMac, 1, 2)));
}

TEST_F(HostTest, VfRemovalSwitchesBackAndAnnounces) {
  start_and_probe();
  remove_vf_in_use(*host, *guest, 3);
  EXPECT_FALSE(host->steer_to_vf(tcp_frame(kMac, 1, 2)));
  guest->poll_all();
  ASSERT_EQ(guest->notes.size(), 2u);
  EXPECT_EQ(note(guest->notes[0]).type, nvsp::kTypeSetDatapath);
  EXPECT_EQ(note(guest->notes[0]).a, nvsp::kDatapathSynthetic);
  EXPECT_EQ(note(guest->notes[1]).type, nvsp::kTypeVfAssoc);
  EXPECT_EQ(note(guest->notes[1]).a, 0u);
  EXPECT_EQ(note(guest->notes[1]).b, 3u);
  EXPECT_EQ(hooks.switches, (std::vector<bool>{true, false}));
}

TEST_F(HostTest, VfRemovalWithoutHostSwitchOnlyAnnounces) {
  config.switch_back_on_vf_removal = false;
  start_and_probe();
  remove_vf_in_use(*host, *guest, 3);
  guest->poll_all();
  ASSERT_EQ(guest->notes.size(), 1u);
  EXPECT_EQ(note(guest->notes[0]).type, nvsp::kTypeVfAssoc);
}

TEST_F(HostTest, PacketFilterPointDelaysVfAssoc) {
  config.vfassoc_point = VfAssocPoint::kPacketFilter;
  start();
  host->set_vf_available(true, 5);
  ASSERT_EQ(guest->probe(), nvsp::kVersion61);
  guest->poll_all();
  EXPECT_TRUE(guest->notes.empty());
  const uint32_t filter = 0x0D;
  ASSERT_TRUE(guest->rndis_set(0x0001010E, {reinterpret_cast<const uint8_t*>(&filter), 4}));
  guest->poll_all();
  ASSERT_EQ(guest->notes.size(), 1u);
  EXPECT_EQ(note(guest->notes[0]).type, nvsp::kTypeVfAssoc);
}

TEST_F(HostTest, PacketFilterPointSendsVfAssocBeforeTheFilterCompletion) {
  // DPDK 24.11.8 switches its data path to a VF attached while its port was not started only in
  // hn_vf_start, right after this SET: the note must reach it first (doc/hardware.md §11.11).
  config.vfassoc_point = VfAssocPoint::kPacketFilter;
  start();
  host->set_vf_available(true, 5);
  ASSERT_EQ(guest->probe(), nvsp::kVersion61);
  const uint32_t filter = 0x0D;
  ASSERT_TRUE(guest->rndis_set(0x0001010E, {reinterpret_cast<const uint8_t*>(&filter), 4}));
  ASSERT_EQ(guest->notes_at_reply, 1u);
  EXPECT_EQ(note(guest->notes[0]).type, nvsp::kTypeVfAssoc);
}

TEST_F(HostTest, NoVfAssocWithoutSriovInNdisConf) {
  config.max_nvsp_version = nvsp::kVersion4;  // DPDK announces SR-IOV from version 5 on
  start();
  host->set_vf_available(true, 5);
  ASSERT_EQ(guest->probe(), nvsp::kVersion4);
  guest->poll_all();
  EXPECT_TRUE(guest->notes.empty());
}

TEST_F(HostTest, ResetStartsOverAndAnnouncesTheVfAgain) {
  start_and_probe();
  host->set_vf_available(true, 9);
  guest->poll_all();
  guest->set_datapath(nvsp::kDatapathVf);
  host->reset();
  EXPECT_FALSE(host->data_path_on_vf());
  EXPECT_EQ(host->nvsp_version(), 0u);
  EXPECT_EQ(hooks.switches, (std::vector<bool>{true, false}));
  const auto before = host->counters().malformed;
  guest->set_datapath(nvsp::kDatapathVf);
  EXPECT_EQ(host->counters().malformed, before + 1) << "NVS message before INIT";
  guest->notes.clear();
  DpdkGuest again(*host, mem, hooks);
  ASSERT_EQ(again.probe(), nvsp::kVersion61);
  again.poll_all();
  ASSERT_EQ(again.notes.size(), 1u);
  EXPECT_EQ(note(again.notes[0]).type, nvsp::kTypeVfAssoc);
  EXPECT_EQ(host->counters().vfassoc_sent, 2u);
}

}  // namespace
}  // namespace mana::emu::netvsc::test
