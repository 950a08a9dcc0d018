// SPDX-License-Identifier: BSD-3-Clause
// Packet wires between emulated ports and the outside: loop, pair, null, tap:<ifname>, shm:<name>,
// fabric:<name>.
//
// A port's endpoint carries whole Ethernet frames (no FCS), of 1 .. 9216 bytes on loop, pair and
// shm. The device thread is the only caller of an endpoint's transmit/receive, so endpoints need no
// locking on the device side; an endpoint that crosses a process or kernel boundary (tap, shm)
// handles that side itself.
//
//   loop          TX comes back to the same port's RX (1024 frames in flight, then drops).
//   pair          ports 2k and 2k+1, both "pair", cross-connected (1024 frames per direction).
//   null          takes every frame (transmit returns true) and never delivers one.
//   tap:<ifname>  Linux TAP interface, created when missing and left down (needs CAP_NET_ADMIN).
//   shm:<name>    link between two processes through /dev/shm/mana-emu-<name>: the first to open
//                 it is side A, the second side B, a third is refused; 512 frames per direction.
//   fabric:<name> Azure's vSwitch between any number of ports (up to 16) in any number of
//                 processes, through /dev/shm/mana-emu-fabric-<name> (fabric_wire.h): IPv4
//                 frames go to the port owning the destination IP with their MACs rewritten,
//                 ARP requests are answered with the gateway MAC, other broadcast and multicast
//                 reach no port, a spoofed source MAC is dropped. Each port needs an IPv4 address.
//                 512 frames queued per receiving port; the fabric is flow-controlled (see
//                 retry_later and holds_rx_frames).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace mana::emu {

class TxRateCap;  // device/tx_rate_cap.h
class FrameRing;  // wire/frame_ring.h

class WireEndpoint {
 public:
  virtual ~WireEndpoint() = default;
  // Hands a frame to the wire. Returns false when the wire cannot take it now (counted as a drop
  // by the caller; a wire never blocks the device thread).
  virtual bool transmit(const uint8_t* frame, uint32_t len) = 0;
  // Copies the next pending frame into `buf` (capacity `cap`) and returns its length, or 0 when
  // none is pending. A frame longer than `cap` is returned truncated with its full length in
  // `*full_len` so that the device can report CQE_RX_TRUNCATED. `*full_len` (may be null) is set on
  // every call: the frame's length, or 0 when none was pending.
  virtual uint32_t receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) = 0;
  // Length of the next pending frame without taking it, 0 when none.
  virtual uint32_t peek() = 0;
  // After transmit() returned false: true when the wire only refused the frame for now (the
  // receiving port's queue is full) and the device should offer it again on a later pass instead
  // of counting a drop. Only flow-controlled wires (fabric) say so, and only for a bounded time.
  virtual bool retry_later() { return false; }
  // True when the port should take frames from this wire only while it has a buffer posted on
  // each RX queue, leaving them queued otherwise (flow control toward the senders). Asked once,
  // when the device is built.
  virtual bool holds_rx_frames() const { return false; }
  // The port's device polled it (each pass, on wires that hold RX frames): a flow-controlled wire
  // holds its senders back only while the receiver is not running (fabric_wire.h).
  virtual void receiver_polled() {}
  // The send-rate cap the port shares with another sender on this wire (its synthetic NIC: one
  // cap for the VM's egress over both paths), or null: the port's own cap.
  virtual TxRateCap* shared_tx_cap() { return nullptr; }
  // An in-process ring endpoint (loop, pair): the rings behind transmit and receive, which the
  // device thread may push to and pop from itself, saving a virtual call per frame. Null for
  // every other wire. Asked once, when the device is built.
  virtual FrameRing* direct_tx_ring() { return nullptr; }
  virtual FrameRing* direct_rx_ring() { return nullptr; }
};

// What a wire may need to know about the port it serves (the fabric routes by MAC and IP).
struct WirePort {
  std::string spec;
  std::array<uint8_t, 6> mac{};
  std::array<uint8_t, 4> ipv4{};  // 0.0.0.0: none
};

// Builds the endpoints of `count` ports from their wire specs. `pair` joins two consecutive ports
// whose spec is "pair" (port 0 with 1, 2 with 3, ...). Returns null and sets `error` on a bad spec.
struct WireSet {
  virtual ~WireSet() = default;
  virtual WireEndpoint* endpoint(unsigned port) = 0;
};
std::unique_ptr<WireSet> make_port_wires(const WirePort* ports, unsigned count, std::string* error);
// The same for wires that need only their spec (no fabric port).
std::unique_ptr<WireSet> make_wires(const std::string* specs, unsigned count, std::string* error);

}  // namespace mana::emu
