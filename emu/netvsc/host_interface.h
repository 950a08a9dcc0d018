// SPDX-License-Identifier: BSD-3-Clause
// The seam between the two halves of the emulated Hyper-V synthetic NIC (doc/emulator.md,
// "The synthetic NIC"):
//   emu/vmbus/   what uio_hv_generic and the VMBus give a guest: the sysfs and /dev/uioN view, the
//                ring buffers of each channel (reader and writer), subchannel offers, guest memory.
//   emu/netvsc/  the host's network service (NetVSP): the NVSP and RNDIS conversation, receive and
//                send buffers, the synthetic data path, VF association and data-path switching.
// The VMBus half decodes guest packets and hands them to NetvspHost (netvsp_host.h); NetvspHost
// answers through HostChannel and reaches guest memory through GuestMemory. Both halves run in one
// thread (the emulator's device thread), so nothing here is locked.
#pragma once

#include <cstdint>
#include <span>

namespace mana::emu::netvsc {

// VMBus channel packet types and flags, as the guest's ring buffer carries them
// (doc/hardware.md §11.2).
inline constexpr uint16_t kPacketInband = 0x6;
inline constexpr uint16_t kPacketRxbuf = 0x7;
inline constexpr uint16_t kPacketGpa = 0x9;
inline constexpr uint16_t kPacketCompletion = 0xb;
inline constexpr uint16_t kFlagCompletionRequested = 0x1;

// One range of a GPA packet: `len` bytes at `offset` into guest page `page` (4 KiB pages; a range
// may run into the following pages).
struct GpaRange {
  uint32_t len;
  uint32_t offset;
  uint64_t page;
};

// One range of a receive-buffer (transfer page) packet: `len` bytes at `offset` into the
// receive buffer.
struct RxbufRange {
  uint32_t len;
  uint32_t offset;
};

// One guest-to-host packet, as the ring reader decoded it. The spans are valid only during the
// call that receives it.
struct GuestPacket {
  uint16_t type = 0;
  uint16_t flags = 0;
  uint64_t xact_id = 0;
  std::span<const uint8_t> body;     // the bytes after the packet's header (hlen), up to tlen
  std::span<const GpaRange> ranges;  // GPA packets: the range list; empty otherwise
};

// The host's writing side of one channel (primary = 0, subchannels 1..n). Each call writes one
// packet into the guest's inbound ring; false when the ring lacks room for it now (nothing was
// written: the caller keeps the work and offers it again on a later pass).
class HostChannel {
 public:
  virtual ~HostChannel() = default;
  virtual bool send_inband(std::span<const uint8_t> body, uint64_t xact_id,
                           bool completion_requested) = 0;
  virtual bool send_completion(std::span<const uint8_t> body, uint64_t xact_id) = 0;
  // A transfer-page packet: `ranges` of the receive buffer `xfer_pageset_id`, followed by `body`
  // (the NVS message), with `xact_id` (the section id the guest completes).
  virtual bool send_rxbuf(uint16_t xfer_pageset_id, std::span<const RxbufRange> ranges,
                          std::span<const uint8_t> body, uint64_t xact_id) = 0;
};

// The guest memory the host may reach: the two buffers the kernel shared with the host at bind
// time (their GPADL handles are in the uio map names) and guest pages named in GPA packets.
class GuestMemory {
 public:
  virtual ~GuestMemory() = default;
  virtual uint32_t receive_buffer_gpadl() const = 0;
  virtual std::span<uint8_t> receive_buffer() = 0;
  virtual uint32_t send_buffer_gpadl() const = 0;
  virtual std::span<uint8_t> send_buffer() = 0;
  // The host's view of guest memory [page * 4096 + offset, + len): empty when that is not memory
  // of the guest (a malformed packet).
  virtual std::span<uint8_t> guest_range(uint64_t page, uint32_t offset, uint32_t len) = 0;
};

// What NetvspHost asks of the VMBus host and of the emulator around it.
class NetvspHooks {
 public:
  virtual ~NetvspHooks() = default;
  // The channel to write to: 0 = primary, 1..offered subchannels; null for another index.
  virtual HostChannel* channel(unsigned index) = 0;
  // Offers `count` subchannels (NVS SUBCH_REQ): their sysfs entries appear, ring last. Returns how
  // many were offered.
  virtual unsigned offer_subchannels(unsigned count) = 0;
  // A frame the guest sent on the synthetic path, for the wire.
  virtual void transmit_frame(std::span<const uint8_t> frame) = 0;
  // The guest switched the data path (NVS SET_DATAPATH): true = to the VF.
  virtual void data_path_switched(bool to_vf) = 0;
};

}  // namespace mana::emu::netvsc
