// SPDX-License-Identifier: BSD-3-Clause
// The wire endpoint kinds behind make_wires() (wire.h), one factory per kind.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "wire/wire.h"

namespace mana::emu {

// Frames a loop or pair direction holds before transmit drops (a power of two).
inline constexpr uint32_t kLocalWireCapacity = 1024;
// Frames each direction of an shm link holds (a power of two).
inline constexpr uint32_t kShmWireCapacity = 512;

// A port's TX comes back to its own RX.
std::unique_ptr<WireEndpoint> make_loop_endpoint(std::string* error);
// Two endpoints whose TX is the other's RX. Both null on error.
std::pair<std::unique_ptr<WireEndpoint>, std::unique_ptr<WireEndpoint>> make_pair_endpoints(
    std::string* error);
// Takes every frame and delivers none.
std::unique_ptr<WireEndpoint> make_null_endpoint();
// The Linux TAP interface `ifname` (created when missing, left down).
std::unique_ptr<WireEndpoint> open_tap_endpoint(const std::string& ifname, std::string* error);
// One end of the shared-memory link `name` (POSIX shm object /mana-emu-<name>).
std::unique_ptr<WireEndpoint> open_shm_endpoint(const std::string& name, std::string* error);
// Removes the link's name unless a live process has an end of it.
void release_shm_if_unused(const std::string& name);
// Port (`mac`, `ipv4`) of the Azure-like fabric `name` (fabric_wire.h).
std::unique_ptr<WireEndpoint> open_fabric_endpoint(const std::string& name,
                                                   const std::array<uint8_t, 6>& mac,
                                                   const std::array<uint8_t, 4>& ipv4,
                                                   std::string* error);

}  // namespace mana::emu
