// SPDX-License-Identifier: BSD-3-Clause
// NetvspHost: guest packets dispatched by VMBus packet type, poll, reset (doc/hardware.md §11.3).
#include "netvsc/netvsp_host.h"

#include <cstdarg>
#include <cstdio>

#include "device/offloads.h"
#include "netvsc/netvsp_state.h"
#include "netvsc/nvsp_format.h"

namespace mana::emu::netvsc {

void drop_malformed(NetvspHost::State& s, unsigned channel, const char* fmt, ...) {
  ++s.counters.malformed;
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "mana-emu: netvsc: channel %u: dropped a malformed guest packet: %s\n",
               channel, text);
}

uint32_t NetvspHost::State::reply_size() const {
  return nvsp_version >= nvsp::kVersion61 ? nvsp::kPacketSizeV61 : nvsp::kPacketSizeV1;
}

uint32_t NetvspHost::State::frame_max() const {
  return ndis_configured ? ndis_mtu : config.mtu + kEthHeaderLen;
}

NetvspHost::NetvspHost(const NetvspConfig& config, GuestMemory& memory, NetvspHooks& hooks)
    : state_(std::make_unique<State>(config, memory, hooks)) {
  State& s = *state_;
  if (s.config.max_queues == 0) s.config.max_queues = 1;
  if (s.config.max_queues > 64) s.config.max_queues = 64;
  s.link_up = s.config.link_up;
  s.pending.resize(s.config.max_queues);
}

NetvspHost::~NetvspHost() = default;

void NetvspHost::on_guest_packet(unsigned channel, const GuestPacket& packet) {
  State& s = *state_;
  if (channel >= s.pending.size() || s.hooks.channel(channel) == nullptr) {
    drop_malformed(s, channel, "no such channel");
    return;
  }
  switch (packet.type) {
    case kPacketInband:
    case kPacketGpa:
      handle_nvs_message(s, channel, packet);
      break;
    case kPacketCompletion:
      handle_guest_completion(s, channel, packet);
      break;
    default:
      drop_malformed(s, channel, "VMBus packet type %#x (expected inband, GPA or completion)",
                     packet.type);
  }
}

bool NetvspHost::deliver_frame(std::span<const uint8_t> frame) {
  return receive_frame(*state_, frame);
}

bool NetvspHost::steer_to_vf(std::span<const uint8_t> frame) const {
  return frame_to_vf(*state_, frame);
}

void NetvspHost::poll() { send_due_notes(*state_); }

void NetvspHost::reset() {
  State& s = *state_;
  if (s.data_path_vf) s.hooks.data_path_switched(false);
  s.nvsp_version = 0;
  s.ndis_configured = false;
  s.ndis_mtu = 0;
  s.ndis_caps = 0;
  s.ndis_major = s.ndis_minor = 0;
  s.rxbuf_connected = false;
  s.chimney_connected = false;
  s.sections.clear();
  s.subchannels = 0;
  s.rndis_initialized = false;
  s.packet_filter = 0;
  s.rss.enabled = false;
  s.data_path_vf = false;
  s.vfassoc_pending = s.vf_allocated;  // the next session hears of the VF again
  s.link_indication_pending = false;
  for (auto& q : s.pending) q.clear();
  s.counters.pending_sends = 0;
}

const NetvspCounters& NetvspHost::counters() const { return state_->counters; }
uint32_t NetvspHost::nvsp_version() const { return state_->nvsp_version; }
bool NetvspHost::data_path_on_vf() const { return state_->data_path_vf; }
unsigned NetvspHost::open_subchannels() const { return state_->subchannels; }
uint32_t NetvspHost::packet_filter() const { return state_->packet_filter; }

}  // namespace mana::emu::netvsc
