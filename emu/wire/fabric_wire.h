// SPDX-License-Identifier: BSD-3-Clause
// fabric:<name>: Azure's vSwitch between the ports of any number of processes, in the POSIX
// shared-memory object /mana-emu-fabric-<name> (a header page with the port table, then one
// receive ring per port slot, fabric_ring.h).
//
// Attachment is kept by OFD locks as for the shm wire (ofd_lock.h): byte 0 serialises attaching
// and detaching, byte 1 + i is held by the owner of port slot i. The port table only changes
// under byte 0; senders keep a private copy of it and reread it when the table's version moves.
// The data path takes no lock and makes no syscall.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wire/fabric_frames.h"

namespace mana::emu {

inline constexpr uint32_t kFabricMaxPorts = 16;
inline constexpr uint32_t kFabricRingCapacity = 512;  // frames queued per receiving port
// How long a sender waits (its SQ backing up) for room in a receiving port's ring before it
// drops the frame, in the receiver's time: the time its device spent polling the port since the
// wait began (polls less than kFabricPollGapMs apart). A receiver that was not scheduled (a
// loaded machine, a paused VM) did not refuse the frames. A receiver that never polls (stopped or
// killed) is given up after kFabricMaxReceiverAbsentMs of the sender's time. After a drop the
// sender drops at once to that port until the ring has room again.
inline constexpr uint32_t kFabricMaxStallMs = 1000;
inline constexpr uint32_t kFabricPollGapMs = 1;
inline constexpr uint32_t kFabricMaxReceiverAbsentMs = 10000;

// What the fabric did with the frames one port sent (each counted once).
struct FabricPortCounters {
  bool attached = false;  // false: the port left; its slot keeps the counts until reused
  FabricMac mac{};
  FabricIpv4 ipv4{};
  uint64_t delivered = 0;            // IPv4 frames queued to the port owning the destination IP
  uint64_t arp_replies = 0;          // ARP requests answered with the gateway MAC
  uint64_t group_not_delivered = 0;  // broadcast/multicast other than ARP requests: reach no VF
  uint64_t unknown_ip = 0;           // dropped: no port owns the destination IP
  uint64_t spoofed = 0;              // dropped: source MAC not the port's (anti-spoofing)
  uint64_t unroutable = 0;           // dropped: not IPv4 or ARP (e.g. IPv6), or too short
  uint64_t full_drops = 0;           // dropped: the receiving port's ring stayed full
};

// The ports of fabric `name`: those attached now and those that left (until their slot is reused).
// False with `error` when there is no such fabric.
bool read_fabric_counters(const std::string& name, std::vector<FabricPortCounters>* out,
                          std::string* error);

// Removes the name of fabric `name` when no live process holds a port of it. A process that exits
// without closing its devices (a DPDK application ends without ibv_close_device) leaves the object
// behind, but its OFD locks die with it: `mana-emu run` calls this after its command ends.
void release_fabric_if_unused(const std::string& name);

// "A.B.C.D".
std::string format_fabric_ipv4(const FabricIpv4& ip);

}  // namespace mana::emu
