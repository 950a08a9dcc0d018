// SPDX-License-Identifier: BSD-3-Clause
// One emulated synthetic NIC's host (doc/emulator.md "The synthetic NIC"): the VMBus channels of
// the uio device (primary ring = map0, subchannel ring files as they are offered), the receive
// and send buffers, and NetvspHost (emu/netvsc) on top; frames through the port's SharedPortWire.
// Runs in the process that opened /dev/uio<n> first; polled by the device thread. The first open
// of /dev/uio<n> in that process starts fresh rings and a fresh NetVSP session, the last close
// ends it (uio_hv_generic's hv_uio_open / hv_uio_release, doc/hardware.md §11.1).
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "config/vmbus_tree.h"
#include "netvsc/netvsp_host.h"
#include "device/device_thread.h"
#include "vmbus/guest_memory.h"
#include "vmbus/shared_port_wire.h"
#include "vmbus/vmbus_channel.h"

namespace mana::emu::vmbus {

class SyntheticNicHost final : public Poller, public netvsc::NetvspHooks {
 public:
  static constexpr unsigned kMaxChannels = 1 + kVmbusMaxSubchannels;

  SyntheticNicHost(std::string root, SyntheticNic nic, const netvsc::NetvspConfig& config,
                   SharedPortWire* wire);
  ~SyntheticNicHost() override;

  // Maps the ring and buffer files; false with `error` set.
  bool map(std::string* error);

  // The application's thread: the first open / last close of /dev/uio<n> in this process.
  void opened();
  void closed();

  // The control thread: the VF went away / came back (applied by the next poll; `delay_ms`
  // before the VF is announced again, as the host waits before offering it).
  void set_vf_present(bool present, unsigned delay_ms);

  // One line of JSON with the NIC's counters (control `netvsc-counters`).
  std::string counters_json();

  unsigned poll() override;

  netvsc::HostChannel* channel(unsigned index) override;
  unsigned offer_subchannels(unsigned count) override;
  void transmit_frame(std::span<const uint8_t> frame) override;
  void data_path_switched(bool to_vf) override;

 private:
  void start_session();
  void end_session();
  void apply_vf_request();

  std::string root_;
  SyntheticNic nic_;
  netvsc::NetvspConfig config_;
  SharedPortWire* wire_;
  std::string name_;  // "netvsc <uuid>" for log lines

  std::mutex lock_;  // the device thread try-locks it per pass; open/close/control lock it
  bool open_ = false;
  std::array<std::span<uint8_t>, kMaxChannels> ring_maps_{};
  std::array<std::unique_ptr<VmbusChannel>, kMaxChannels> channels_{};
  unsigned channel_count_ = 0;
  std::span<uint8_t> receive_, send_;
  std::unique_ptr<SharedGuestMemory> memory_;
  std::unique_ptr<netvsc::NetvspHost> host_;

  // VF requests from the control thread: the wanted state and when to announce it.
  std::atomic<int> vf_wanted_{1};
  std::atomic<int64_t> vf_due_ns_{0};
  int vf_announced_ = -1;
  uint32_t vf_serial_ = 1;
  uint64_t tx_wire_drops_ = 0;
  uint64_t sessions_ = 0;
};

}  // namespace mana::emu::vmbus
