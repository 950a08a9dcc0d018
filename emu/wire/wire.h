// Packet wires between emulated ports and the outside: loop, pair, null, tap:<ifname>, shm:<name>.
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
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mana::emu {

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
};

// Builds the endpoints of `count` ports from their wire specs. `pair` joins two consecutive ports
// whose spec is "pair" (port 0 with 1, 2 with 3, ...). Returns null and sets `error` on a bad spec.
struct WireSet {
  virtual ~WireSet() = default;
  virtual WireEndpoint* endpoint(unsigned port) = 0;
};
std::unique_ptr<WireSet> make_wires(const std::string* specs, unsigned count, std::string* error);

}  // namespace mana::emu
