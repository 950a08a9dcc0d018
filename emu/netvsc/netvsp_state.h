// SPDX-License-Identifier: BSD-3-Clause
// NetvspHost's state and the functions of its parts, one file per concern (doc/hardware.md §11.3):
//   netvsp_host.cpp      dispatch of guest packets, poll, reset
//   outbound.cpp         host-to-guest packets, kept in order when a ring is full
//   nvsp_messages.cpp    NVS INIT .. SUBCH_REQ, SET_DATAPATH
//   rndis_control.cpp    RNDIS INITIALIZE, QUERY, SET, HALT, RESET, KEEPALIVE
//   ndis_objects.cpp     the NDIS objects in query answers and sets
//   tx_path.cpp          guest frames out of chimney sections and GPA ranges
//   rx_path.cpp          wire frames into receive sections, RSS
//   vf_association.cpp   VFASSOC notes, link indications, steering
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "device/rss_hasher.h"
#include "netvsc/netvsp_host.h"
#include "netvsc/receive_sections.h"

namespace mana::emu::netvsc {

// A host packet that found no room in its ring yet.
struct Outbound {
  enum class Kind : uint8_t { kInband, kCompletion, kRndisMessage } kind = Kind::kInband;
  uint64_t xact_id = 0;
  bool completion_requested = false;
  std::vector<uint8_t> body;  // the NVS message, or for kRndisMessage the RNDIS message
};

struct RssState {
  bool enabled = false;
  uint32_t hash_types = 0;  // NDIS hash type bits the guest enabled
  uint32_t table_size = 0;  // entries
  std::array<uint32_t, 128> table{};
  std::unique_ptr<RssHasher> hasher;
};

struct NetvspHost::State {
  State(const NetvspConfig& c, GuestMemory& m, NetvspHooks& h) : config(c), memory(m), hooks(h) {}
  NetvspConfig config;
  GuestMemory& memory;
  NetvspHooks& hooks;
  NetvspCounters counters;

  // NVSP session.
  uint32_t nvsp_version = 0;
  bool ndis_configured = false;
  uint32_t ndis_mtu = 0;  // NDIS_CONF's mtu (with the Ethernet header), 1514..9216
  uint64_t ndis_caps = 0;
  uint32_t ndis_major = 0, ndis_minor = 0;
  bool rxbuf_connected = false;
  bool chimney_connected = false;
  ReceiveSections sections;
  unsigned subchannels = 0;
  // RNDIS.
  bool rndis_initialized = false;
  uint32_t packet_filter = 0;
  RssState rss;
  // VF and link.
  bool data_path_vf = false;
  bool vf_allocated = false;
  uint32_t vf_serial = 0;
  bool vfassoc_pending = false;  // a VFASSOC note waits for the guest to be able to take it
  bool link_up = true;
  bool link_indication_pending = false;

  std::vector<std::deque<Outbound>> pending;  // per channel
  std::vector<uint8_t> tx_scratch;            // a GPA packet's ranges gathered
  std::vector<uint8_t> frame_scratch;         // a frame with its checksums or VLAN tag
  std::vector<uint8_t> segment_scratch;       // one LSO segment

  uint32_t reply_size() const;  // an NVS reply's padded size for the session's version
  // The largest frame of the session with its Ethernet header: NDIS_CONF's (doc/hardware.md
  // §11.6), the configured MTU's before one.
  uint32_t frame_max() const;
};

// Counts the packet, logs one line, drops it.
void drop_malformed(NetvspHost::State& s, unsigned channel, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// outbound.cpp: each returns false when the channel does not exist; a full ring keeps the packet.
bool send_inband(NetvspHost::State& s, unsigned channel, std::span<const uint8_t> body,
                 uint64_t xact_id, bool completion_requested);
bool send_completion(NetvspHost::State& s, unsigned channel, std::span<const uint8_t> body,
                     uint64_t xact_id);
// An RNDIS control message or indication to the guest through a receive section (primary).
bool send_rndis_message(NetvspHost::State& s, std::span<const uint8_t> message);
// Writes pending packets of every channel that has room now.
void flush_pending(NetvspHost::State& s);
bool channel_has_pending(const NetvspHost::State& s, unsigned channel);

// nvsp_messages.cpp: an INBAND or GPA packet's NVS message.
void handle_nvs_message(NetvspHost::State& s, unsigned channel, const GuestPacket& p);
void handle_guest_completion(NetvspHost::State& s, unsigned channel, const GuestPacket& p);

// rndis_control.cpp: one RNDIS control message from the guest (NVS RNDIS, mtype control).
void handle_rndis_control(NetvspHost::State& s, unsigned channel, std::span<const uint8_t> msg);

// ndis_objects.cpp
std::vector<uint8_t> offload_capabilities(const NetvspHost::State& s, uint32_t asked_len);
std::vector<uint8_t> rss_capabilities(const NetvspHost::State& s, uint32_t asked_len);
// Returns an RNDIS status (success or invalid data).
uint32_t set_rss_parameters(NetvspHost::State& s, std::span<const uint8_t> info);

// tx_path.cpp: an NVS RNDIS data message (chimney or GPA); completes it.
void handle_tx(NetvspHost::State& s, unsigned channel, const GuestPacket& p, uint32_t chim_idx,
               uint32_t chim_sz);

// rx_path.cpp
bool receive_frame(NetvspHost::State& s, std::span<const uint8_t> frame);

// vf_association.cpp
void send_due_notes(NetvspHost::State& s);
void guest_set_datapath(NetvspHost::State& s, unsigned channel, const GuestPacket& p,
                        uint32_t path);
bool frame_to_vf(const NetvspHost::State& s, std::span<const uint8_t> frame);

}  // namespace mana::emu::netvsc
