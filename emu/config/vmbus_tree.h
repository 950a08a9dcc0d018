// SPDX-License-Identifier: BSD-3-Clause
// The VMBus view of the emulated synthetic NICs under the run folder R (doc/emulator.md "The
// synthetic NIC", doc/hardware.md §11.1): for a port with `uio_netvsc`, a Hyper-V network device
// bound to uio_hv_generic as DPDK's vmbus bus reads it,
//   R/sys/bus/vmbus/devices/<uuid>/{class_id,device_id,id,monitor_id,numa_node}
//   R/sys/bus/vmbus/devices/<uuid>/uio/uio<n>/maps/map<i>/{name,size}       i = 0..4
//   R/sys/bus/vmbus/devices/<uuid>/channels/<relid>/{subchannel_id,monitor_id,ring}
// with R/dev/uio<n> standing in for the uio device and one file per map (the primary channel's
// ring file is map0); subchannel folders appear when the host offers them. A port with `netvsc`
// gets the same folder bound to hv_netvsc instead (no uio folder: DPDK skips it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace mana::emu {

// uio_hv_generic's sizes (Linux 6.1: HV_RING_SIZE 512 pages per direction, RECV_BUFFER_SIZE,
// SEND_BUFFER_SIZE).
inline constexpr uint64_t kVmbusRingBytes = 2 * 1024 * 1024;  // one direction
inline constexpr uint64_t kVmbusRecvBufferBytes = 31 * 1024 * 1024;
inline constexpr uint64_t kVmbusSendBufferBytes = 16 * 1024 * 1024;
inline constexpr unsigned kVmbusMaps = 5;
inline constexpr unsigned kVmbusMaxSubchannels = 63;

struct SyntheticNic {
  uint32_t vf = 0;
  uint32_t port = 0;
  uint32_t index = 0;  // n of uio<n>, over the run's synthetic NICs in config order
  std::string uuid;
  uint32_t relid = 0;  // the primary channel's; subchannel k has relid + k
  uint32_t monitor_id = 0;
  uint32_t recv_gpadl = 0;
  uint32_t send_gpadl = 0;
};

// The run's synthetic NICs bound to uio_hv_generic (ports with uio_netvsc), in config order.
std::vector<SyntheticNic> synthetic_nics(const EmuConfig& config);
// The instance GUID of the VMBus device of a port (with netvsc or uio_netvsc).
std::string vmbus_device_uuid(uint32_t vf, uint32_t port);

std::string vmbus_devices_dir(const std::string& root);             // R/sys/bus/vmbus/devices
std::string uio_stand_in(const std::string& root, uint32_t index);  // R/dev/uio<n>
// The file behind map `map` of uio<n> (map0 is the primary channel's ring file).
std::string vmbus_map_file(const std::string& root, const SyntheticNic& nic, unsigned map);
std::string vmbus_channel_dir(const std::string& root, const SyntheticNic& nic, unsigned sub);
uint64_t vmbus_map_size(unsigned map);

// Writes the VMBus devices of `config` (both kinds) under config.root.
bool write_vmbus_tree(const EmuConfig& config, std::string* error);

// Offers subchannel `sub` (1..63): its folder with subchannel_id and monitor_id, then the ring
// file (fresh, both directions) under its final name last, as uio_hv_generic creates it once the
// channel is open. Returns the ring file's path ("" on error, with `error` set).
std::string offer_vmbus_subchannel(const std::string& root, const SyntheticNic& nic, unsigned sub,
                                   std::string* error);
// Removes every subchannel folder (the device was closed: the host rescinds them).
void remove_vmbus_subchannels(const std::string& root, const SyntheticNic& nic);

}  // namespace mana::emu
