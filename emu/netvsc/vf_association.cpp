// SPDX-License-Identifier: BSD-3-Clause
// VF association and the data path (doc/hardware.md §11.9): the host tells the guest that a VF with
// its MAC exists (VFASSOC), the guest moves its data path there (SET_DATAPATH), and the wire then
// delivers unicast to the VF while group frames stay synthetic (Azure, §9.15). Link changes reach
// the guest as RNDIS status indications.
#include <cstdio>
#include <cstring>

#include "netvsc/netvsp_state.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc {
namespace {

// Transaction ids of host requests (OpenVMM), so that guest completions of them can be told apart.
constexpr uint64_t kVfAssocXact = 0x8000000000000000ull;
constexpr uint64_t kSwitchDatapathXact = 0x8000000000000001ull;

bool guest_ready_for_vfassoc(const NetvspHost::State& s) {
  // OpenVMM: only with NVSP 4 or later whose NDIS_CONF announced SR-IOV, once RNDIS is operational.
  if (s.nvsp_version < nvsp::kVersion4 || !(s.ndis_caps & nvsp::kNdisConfSriov) ||
      !s.rndis_initialized)
    return false;
  return s.config.vfassoc_point == VfAssocPoint::kRndisInit || s.packet_filter != 0;
}

}  // namespace

void send_due_notes(NetvspHost::State& s) {
  flush_pending(s);
  if (s.link_indication_pending && s.rndis_initialized) {
    const rndis::StatusMsg m{rndis::kIndicateStatusMsg, sizeof(rndis::StatusMsg),
                             s.link_up ? rndis::kStatusMediaConnect : rndis::kStatusMediaDisconnect,
                             0, 0};
    if (send_rndis_message(s, {reinterpret_cast<const uint8_t*>(&m), sizeof(m)}))
      s.link_indication_pending = false;
  }
  if (s.vfassoc_pending && guest_ready_for_vfassoc(s)) {
    const nvsp::VfAssoc m{nvsp::kTypeVfAssoc, s.vf_allocated ? 1u : 0u, s.vf_serial};
    if (send_inband(s, 0, {reinterpret_cast<const uint8_t*>(&m), sizeof(m)}, kVfAssocXact, true)) {
      s.vfassoc_pending = false;
      ++s.counters.vfassoc_sent;
    }
  }
}

void guest_set_datapath(NetvspHost::State& s, unsigned channel, const GuestPacket& p,
                        uint32_t path) {
  const bool to_vf = path == nvsp::kDatapathVf;
  if (path != nvsp::kDatapathVf && path != nvsp::kDatapathSynthetic)
    return drop_malformed(s, channel, "SET_DATAPATH to path %u", path);
  ++(to_vf ? s.counters.datapath_to_vf : s.counters.datapath_to_synthetic);
  if (to_vf && !s.vf_allocated) {
    // OpenVMM ignores a switch to a VF it has not advertised.
    std::fprintf(stderr,
                 "mana-emu: netvsc: SET_DATAPATH to the VF while no VF is allocated: "
                 "the data path stays synthetic\n");
  } else if (to_vf != s.data_path_vf) {
    s.data_path_vf = to_vf;
    s.hooks.data_path_switched(to_vf);
  }
  const bool complete = s.config.set_datapath_completion == SetDatapathCompletion::kAlways ||
                        (s.config.set_datapath_completion == SetDatapathCompletion::kAsRequested &&
                         (p.flags & kFlagCompletionRequested));
  if (complete) send_completion(s, channel, {}, p.xact_id);
}

bool frame_to_vf(const NetvspHost::State& s, std::span<const uint8_t> frame) {
  if (!s.data_path_vf || !s.vf_allocated || frame.empty()) return false;
  const bool group = frame[0] & 1;
  return !group || !s.config.group_frames_synthetic;
}

}  // namespace mana::emu::netvsc

namespace mana::emu::netvsc {

void NetvspHost::set_vf_available(bool allocated, uint32_t serial) {
  State& s = *state_;
  if (s.vf_allocated == allocated && s.vf_serial == serial) return;
  s.vf_allocated = allocated;
  s.vf_serial = serial;
  s.vfassoc_pending = true;
  if (!allocated && s.data_path_vf) {
    s.data_path_vf = false;
    s.hooks.data_path_switched(false);
    if (s.config.switch_back_on_vf_removal && s.nvsp_version >= nvsp::kVersion4) {
      // OpenVMM tells the guest its data path is synthetic again before the VF note.
      const nvsp::Datapath m{nvsp::kTypeSetDatapath, nvsp::kDatapathSynthetic, {}};
      send_inband(s, 0, {reinterpret_cast<const uint8_t*>(&m), 8}, kSwitchDatapathXact, true);
    }
  }
}

void NetvspHost::set_link(bool up) {
  State& s = *state_;
  if (s.link_up == up) return;
  s.link_up = up;
  s.link_indication_pending = true;
}

}  // namespace mana::emu::netvsc
