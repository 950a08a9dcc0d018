// SPDX-License-Identifier: BSD-3-Clause
// Host-to-guest packets (doc/hardware.md §11.10): written at once when the ring has room, else kept
// per channel in order and written by poll(); nothing the guest waits for is ever lost.
#include <cstdio>
#include <cstring>

#include "netvsc/netvsp_state.h"
#include "netvsc/nvsp_format.h"
#include "netvsc/rndis_format.h"

namespace mana::emu::netvsc {
namespace {

void keep(NetvspHost::State& s, unsigned channel, Outbound out) {
  s.pending[channel].push_back(std::move(out));
  ++s.counters.pending_sends;
}

// The NVS RNDIS message that accompanies an RXBUF packet.
std::span<const uint8_t> rxbuf_nvs_message(const NetvspHost::State& s, uint32_t mtype,
                                           nvsp::Rndis* msg) {
  *msg = {};
  msg->type = nvsp::kTypeRndis;
  msg->mtype = mtype;
  msg->chim_idx = nvsp::kNoChimneySection;
  return {reinterpret_cast<const uint8_t*>(msg), s.reply_size()};
}

// Writes one RNDIS message into a free receive section and sends it on the primary channel.
// False when no section is free or the ring is full (nothing was sent, the section is free).
bool try_rndis_message(NetvspHost::State& s, std::span<const uint8_t> message) {
  HostChannel* ch = s.hooks.channel(0);
  if (message.size() > s.sections.section_size()) {
    // Kept from a session whose sections were larger: it cannot be sent any more.
    std::fprintf(stderr,
                 "mana-emu: netvsc: dropped a %zu-byte RNDIS message kept for %u-byte "
                 "receive sections\n",
                 message.size(), s.sections.section_size());
    return s.sections.section_size() != 0;  // without sections it waits for a connect
  }
  const uint32_t id = s.sections.allocate();
  if (id == ReceiveSections::kNone) return false;
  const uint32_t offset = id * s.sections.section_size();
  std::memcpy(s.memory.receive_buffer().data() + offset, message.data(), message.size());
  const RxbufRange range{static_cast<uint32_t>(message.size()), offset};
  nvsp::Rndis nvs;
  if (ch->send_rxbuf(nvsp::kRxbufSignature, {&range, 1},
                     rxbuf_nvs_message(s, nvsp::kRndisControl, &nvs), id))
    return true;
  s.sections.release(id);
  return false;
}

bool try_send(NetvspHost::State& s, unsigned channel, const Outbound& out) {
  HostChannel* ch = s.hooks.channel(channel);
  switch (out.kind) {
    case Outbound::Kind::kInband:
      return ch->send_inband(out.body, out.xact_id, out.completion_requested);
    case Outbound::Kind::kCompletion:
      return ch->send_completion(out.body, out.xact_id);
    case Outbound::Kind::kRndisMessage:
      return try_rndis_message(s, out.body);
  }
  return false;
}

bool send_or_keep(NetvspHost::State& s, unsigned channel, Outbound out) {
  if (channel >= s.pending.size() || s.hooks.channel(channel) == nullptr) return false;
  if (s.pending[channel].empty() && try_send(s, channel, out)) return true;
  keep(s, channel, std::move(out));
  return true;
}

}  // namespace

bool send_inband(NetvspHost::State& s, unsigned channel, std::span<const uint8_t> body,
                 uint64_t xact_id, bool completion_requested) {
  return send_or_keep(s, channel,
                      {Outbound::Kind::kInband, xact_id, completion_requested,
                       std::vector<uint8_t>(body.begin(), body.end())});
}

bool send_completion(NetvspHost::State& s, unsigned channel, std::span<const uint8_t> body,
                     uint64_t xact_id) {
  // The common case (a TX completion with room in the ring) allocates nothing.
  if (channel < s.pending.size() && s.pending[channel].empty()) {
    if (HostChannel* ch = s.hooks.channel(channel); ch && ch->send_completion(body, xact_id))
      return true;
  }
  return send_or_keep(s, channel,
                      {Outbound::Kind::kCompletion, xact_id, false,
                       std::vector<uint8_t>(body.begin(), body.end())});
}

bool send_rndis_message(NetvspHost::State& s, std::span<const uint8_t> message) {
  if (message.size() > s.sections.section_size()) return false;
  return send_or_keep(s, 0,
                      {Outbound::Kind::kRndisMessage, 0, false,
                       std::vector<uint8_t>(message.begin(), message.end())});
}

void flush_pending(NetvspHost::State& s) {
  for (unsigned c = 0; c < s.pending.size(); ++c) {
    auto& q = s.pending[c];
    if (q.empty() || s.hooks.channel(c) == nullptr) continue;
    while (!q.empty() && try_send(s, c, q.front())) {
      q.pop_front();
      --s.counters.pending_sends;
    }
  }
}

bool channel_has_pending(const NetvspHost::State& s, unsigned channel) {
  return channel < s.pending.size() && !s.pending[channel].empty();
}

}  // namespace mana::emu::netvsc
