// The device thread of a process: runs every owned Device's data path (`poll`) and, in trap mode,
// drains the doorbell FIFOs of the contexts into `Device::ring`. Lock-free tables so the loop never
// blocks on the control path.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "device/device.h"
#include "doorbell/doorbell_fifo.h"

namespace mana::emu::verbs {

class DeviceThread {
 public:
  static constexpr unsigned kMaxDevices = 64;
  static constexpr unsigned kMaxFifos = 256;

  // Control path (callers serialise): starts the thread with the first device, pinned to `cpu`
  // when it is >= 0 (set before the first device).
  void set_cpu(int cpu) { cpu_ = cpu; }
  void add_device(Device* device);
  bool add_fifo(Device* device, doorbell::DoorbellFifo* fifo);
  // Returns once the thread has drained the FIFO and will not touch it again.
  void remove_fifo(doorbell::DoorbellFifo* fifo);
  // Returns once every record pushed to a FIFO before the call has been handed to its device
  // (`Device::ring`); false, with one line on stderr, if the thread made no pass within 5 s.
  bool settle();
  void stop();

 private:
  struct FifoSlot {
    std::atomic<doorbell::DoorbellFifo*> fifo{nullptr};
    Device* device = nullptr;
  };
  void run();
  unsigned drain_fifos();
  bool wait_for_pass();

  std::atomic<Device*> devices_[kMaxDevices] = {};
  FifoSlot fifos_[kMaxFifos];
  std::atomic<unsigned> fifo_slots_used_{0};  // high-water mark: the loop scans only these
  std::atomic<uint64_t> passes_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int cpu_ = -1;
};

}  // namespace mana::emu::verbs
