// SPDX-License-Identifier: BSD-3-Clause
// The device thread of a process: runs every owned Device's data path (`poll`) and, in trap mode,
// drains the doorbell FIFOs of the contexts into `Device::ring`. Lock-free tables so the loop never
// blocks on the control path. In lockstep mode (doc/emulator.md "Lockstep") there is no thread: the
// application runs each pass by calling `step()` (exported as `mana_emu_step`).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "device/device.h"
#include "doorbell/doorbell_fifo.h"

namespace mana::emu {

// Another model the device thread runs on each pass (the synthetic NICs, emu/vmbus).
class Poller {
 public:
  virtual ~Poller() = default;
  virtual unsigned poll() = 0;  // work done, 0 when idle
};

class DeviceThread {
 public:
  static constexpr unsigned kMaxDevices = 64;
  static constexpr unsigned kMaxPollers = 64;
  static constexpr unsigned kMaxFifos = 256;

  // Control path (callers serialise): starts the thread with the first device, pinned to `cpu`
  // when it is >= 0 (set before the first device).
  void set_cpu(int cpu) { cpu_ = cpu; }
  // Before the first device: no thread; passes run only in `step()`.
  void set_lockstep(bool on) { lockstep_ = on; }
  bool lockstep() const { return lockstep_; }
  void add_device(Device* device);
  // Starts the thread too (a synthetic NIC may be opened before any VF).
  void add_poller(Poller* poller);
  bool add_fifo(Device* device, doorbell::DoorbellFifo* fifo);
  // Returns once the thread has drained the FIFO and will not touch it again.
  void remove_fifo(doorbell::DoorbellFifo* fifo);
  // Returns once every record pushed to a FIFO before the call has been handed to its device
  // (`Device::ring`); false, with one line on stderr, if the thread made no pass within 5 s.
  bool settle();
  void stop();
  // Lockstep mode: one pass (FIFOs drained into the devices, then every device polled) in the
  // caller's thread; returns the work done (records and polled items), 0 when idle.
  unsigned step();

 private:
  struct FifoSlot {
    std::atomic<doorbell::DoorbellFifo*> fifo{nullptr};
    Device* device = nullptr;
  };
  void run();
  unsigned pass();
  unsigned drain_fifos();       // until a round pops nothing: in the order of the stores
  unsigned drain_fifos_once();  // one round over every FIFO
  bool wait_for_pass();

  void start();

  std::atomic<Device*> devices_[kMaxDevices] = {};
  std::atomic<Poller*> pollers_[kMaxPollers] = {};
  FifoSlot fifos_[kMaxFifos];
  std::atomic<unsigned> fifo_slots_used_{0};  // high-water mark: the loop scans only these
  std::atomic<uint64_t> passes_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int cpu_ = -1;
  bool lockstep_ = false;
  std::mutex step_lock_;  // lockstep: a control-path drain never overlaps the application's step
};

}  // namespace mana::emu
