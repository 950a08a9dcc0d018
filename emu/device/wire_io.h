// SPDX-License-Identifier: BSD-3-Clause
// A port's frames to and from its wire on the per-frame path: an in-process wire's ring directly
// (inline, no virtual call), any other wire through its endpoint. Same frames either way: the
// endpoint's transmit and receive are these ring operations.
#pragma once

#include "device/objects.h"
#include "wire/frame_ring.h"
#include "wire/wire.h"

namespace mana::emu {

inline bool wire_transmit(Port& port, const uint8_t* frame, uint32_t len) {
  return port.tx_ring != nullptr ? port.tx_ring->push(frame, len) : port.wire->transmit(frame, len);
}

inline uint32_t wire_receive(Port& port, uint8_t* buf, uint32_t cap, uint32_t* full_len) {
  return port.rx_ring != nullptr ? port.rx_ring->pop(buf, cap, full_len)
                                 : port.wire->receive(buf, cap, full_len);
}

}  // namespace mana::emu
