// SPDX-License-Identifier: BSD-3-Clause
// The host's network service (NetVSP) of one emulated Hyper-V synthetic NIC (doc/hardware.md §11.3
// onward): the NVSP and RNDIS conversation, the receive and send (chimney) buffers, the synthetic
// data path with RSS over subchannels, VF association and data-path switching. The VMBus half
// (emu/vmbus/) decodes the guest's ring packets and calls on_guest_packet; frames from the wire
// come in through deliver_frame. Everything runs on the emulator's device thread
// (host_interface.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "netvsc/host_interface.h"

namespace mana::emu::netvsc {

// Where the public record is open, the choice is an option; doc/hardware.md §11.9 names the source
// behind each value.
enum class SetDatapathCompletion : uint8_t {
  kAsRequested,  // complete SET_DATAPATH only when the guest asked for it (flag RC): Linux asks,
                 // DPDK not
  kNever,        // never complete it
  kAlways,       // always (DPDK 22.11 then logs "unexpected send completion type")
};

enum class VfAssocPoint : uint8_t {
  kRndisInit,     // once RNDIS INITIALIZE completed (OpenVMM: "RNDIS operational")
  kPacketFilter,  // once the guest set a non-zero packet filter (its port started)
};

struct NetvspConfig {
  std::array<uint8_t, 6> mac{};  // the permanent address (OID_802_3_PERMANENT_ADDRESS)
  uint32_t mtu = 1500;  // the largest frame payload the host delivers (without the 14 B header)
  uint32_t max_queues =
      64;  // RSS caps' receive queue count: primary + up to max_queues-1 subchannels
  uint64_t link_speed_bps = 100'000'000'000ull;  // OID_GEN_LINK_SPEED (reported in 100 bps units)
  bool link_up = true;
  // Receive-buffer section (slot) size; 0 = one frame per section, sized as OpenVMM does (RNDIS
  // header + per-packet info + MTU + Ethernet header, rounded up to 8).
  uint32_t rxbuf_section_size = 0;
  uint32_t chimney_section_size = 6144;        // CHIM_CONNRESP sectsz (OpenVMM; a multiple of 4)
  uint32_t max_nvsp_version = 0x60001;         // the highest NVSP version INIT accepts
  uint32_t rndis_max_packets_per_message = 8;  // RNDIS INIT_CMPLT pktmaxcnt (OpenVMM)
  // Open behaviours (doc/hardware.md §11.9).
  SetDatapathCompletion set_datapath_completion = SetDatapathCompletion::kAsRequested;
  VfAssocPoint vfassoc_point = VfAssocPoint::kRndisInit;
  bool group_frames_synthetic = true;  // after SET_DATAPATH 1, broadcast/multicast stay synthetic
  bool switch_back_on_vf_removal = true;  // VF gone: host sends SET_DATAPATH synthetic (OpenVMM)
  bool rx_checksum_info = true;  // RX per-packet info CSUM (verified IPv4/TCP/UDP checksums)
};

struct NetvspCounters {
  uint64_t nvs_messages = 0;   // well-formed NVS messages from the guest
  uint64_t rndis_control = 0;  // RNDIS control messages (INIT, QUERY, SET, HALT, RESET, KEEPALIVE)
  uint64_t malformed = 0;      // guest packets dropped as malformed (one log line each)
  uint64_t tx_packets = 0;     // frames the guest sent on the synthetic path
  uint64_t tx_bytes = 0;
  uint64_t tx_completions = 0;  // COMP 108 sent for guest TX packets
  uint64_t rx_packets = 0;      // frames delivered into receive sections
  uint64_t rx_bytes = 0;
  uint64_t rx_dropped_not_ready = 0;   // no receive buffer, no filter, or RNDIS not initialized
  uint64_t rx_dropped_no_section = 0;  // every receive section in use by the guest
  uint64_t rx_dropped_ring_full = 0;   // the channel's inbound ring had no room
  uint64_t rx_filtered = 0;            // not passed by the guest's packet filter
  uint64_t rx_dropped_too_long = 0;    // frame and RNDIS header larger than a receive section
  uint64_t vfassoc_sent = 0;           // VFASSOC notes sent (allocated or not)
  uint64_t datapath_to_vf = 0;         // SET_DATAPATH 1 from the guest
  uint64_t datapath_to_synthetic = 0;  // SET_DATAPATH 0 from the guest
  uint64_t pending_sends = 0;          // host packets waiting for ring room now
};

class NetvspHost {
 public:
  // `memory` and `hooks` outlive the host.
  NetvspHost(const NetvspConfig& config, GuestMemory& memory, NetvspHooks& hooks);
  ~NetvspHost();
  NetvspHost(const NetvspHost&) = delete;
  NetvspHost& operator=(const NetvspHost&) = delete;

  // One packet the guest wrote into channel `channel`'s ring (0 = primary). A malformed packet is
  // counted, logged in one line and dropped.
  void on_guest_packet(unsigned channel, const GuestPacket& packet);

  // A frame from the wire for this NIC's synthetic path: RSS picks the channel, the frame goes into
  // a receive section as an RNDIS packet. False when it was dropped (counted).
  bool deliver_frame(std::span<const uint8_t> frame);

  // Whether a frame for this MAC from the wire goes to the VF instead of deliver_frame: after the
  // guest's SET_DATAPATH 1 while the VF is allocated, unicast (and group frames unless
  // group_frames_synthetic).
  bool steer_to_vf(std::span<const uint8_t> frame) const;

  // The VF appeared (allocated = true) or is going away: queues a VFASSOC note, sent by poll() once
  // the guest can take it (VfAssocPoint, never while an NVS request is unanswered).
  void set_vf_available(bool allocated, uint32_t serial);

  // Link state from the emulator: an RNDIS INDICATE_STATUS (connect/disconnect) to the guest.
  void set_link(bool up);

  // Call after each pass over the guest rings: retries host packets that found no ring room and
  // sends queued notes (VFASSOC, link status).
  void poll();

  // The guest closed the device (last close of /dev/uioN) and the next open starts over: every
  // state goes back to before NVSP INIT (buffers disconnected, subchannels gone, sections free).
  void reset();

  const NetvspCounters& counters() const;
  uint32_t nvsp_version() const;  // 0 before INIT succeeded
  bool data_path_on_vf() const;   // the guest's last SET_DATAPATH (false initially)
  unsigned open_subchannels() const;
  uint32_t packet_filter() const;  // OID_GEN_CURRENT_PACKET_FILTER as the guest set it

  struct State;  // netvsp_state.h

 private:
  std::unique_ptr<State> state_;
};

}  // namespace mana::emu::netvsc
