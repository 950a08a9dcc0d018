// SPDX-License-Identifier: BSD-3-Clause
#include "device/device_thread.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <chrono>

#include "device/quiet_rounds.h"

namespace mana::emu {

namespace {
// After this many empty passes the thread naps between passes, so that an idle emulator does not
// keep a core busy (a latency trade-off, not a synchronisation).
constexpr unsigned kBusyPasses = 2048;
constexpr long kIdleNapNs = 20'000;
}  // namespace

void DeviceThread::add_device(Device* device) {
  for (auto& slot : devices_) {
    Device* expected = nullptr;
    if (slot.compare_exchange_strong(expected, device)) break;
  }
  start();
}

void DeviceThread::add_poller(Poller* poller) {
  for (auto& slot : pollers_) {
    Poller* expected = nullptr;
    if (slot.compare_exchange_strong(expected, poller)) break;
  }
  start();
}

void DeviceThread::start() {
  if (!lockstep_ && !thread_.joinable()) {
    stop_.store(false);
    thread_ = std::thread([this] { run(); });
    if (cpu_ >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu_, &set);
      if (int rc = pthread_setaffinity_np(thread_.native_handle(), sizeof(set), &set); rc != 0) {
        static const char msg[] = "mana-emu: cannot pin the device thread to the requested CPU\n";
        (void)!write(2, msg, sizeof(msg) - 1);
      }
    }
  }
}

bool DeviceThread::add_fifo(Device* device, doorbell::DoorbellFifo* fifo) {
  for (unsigned i = 0; i < kMaxFifos; ++i) {
    FifoSlot& slot = fifos_[i];
    if (slot.fifo.load(std::memory_order_acquire) == nullptr) {
      slot.device = device;
      slot.fifo.store(fifo, std::memory_order_release);
      if (fifo_slots_used_.load(std::memory_order_relaxed) <= i) {
        fifo_slots_used_.store(i + 1, std::memory_order_release);
      }
      return true;
    }
  }
  return false;
}

void DeviceThread::remove_fifo(doorbell::DoorbellFifo* fifo) {
  if (lockstep_) {
    // No thread to wait for: hand the pending records over here, under the step lock.
    std::lock_guard<std::mutex> guard(step_lock_);
    drain_fifos();
    for (auto& slot : fifos_)
      if (slot.fifo.load(std::memory_order_relaxed) == fifo)
        slot.fifo.store(nullptr, std::memory_order_release);
    return;
  }
  for (auto& slot : fifos_) {
    if (slot.fifo.load(std::memory_order_acquire) == fifo) {
      wait_for_pass();  // pending records reach the device first
      slot.fifo.store(nullptr, std::memory_order_release);
    }
  }
  wait_for_pass();  // a pass that began before the removal has ended
}

bool DeviceThread::wait_for_pass() {
  if (!thread_.joinable()) return true;
  // Two completed passes after now: the one in progress may have started before our change.
  const uint64_t target = passes_.load(std::memory_order_acquire) + 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (passes_.load(std::memory_order_acquire) < target) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

bool DeviceThread::settle() {
  if (lockstep_) {
    std::lock_guard<std::mutex> guard(step_lock_);
    drain_fifos();
    return true;
  }
  if (wait_for_pass()) return true;
  static const char msg[] =
      "mana-emu: the device thread made no pass in 5 s; doorbells still in the trap FIFO may "
      "reach a destroyed queue\n";
  (void)!write(2, msg, sizeof(msg) - 1);
  return false;
}

void DeviceThread::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
}

// Doorbells reach a NIC in the order one CPU stored them, whatever page they went to
// (doc/hardware.md §4.8, "Order across queues"). Draining one FIFO after another does not keep
// that order: a thread preempted between two FIFOs hands over a context's newer doorbells without
// another context's older ones (an SQ's TX of frames whose RX buffers were reposted, unseen, before
// it). So rounds repeat until one pops nothing: then every record pushed before a popped one was
// popped too, and the device applies a set closed under that order before it polls.
unsigned DeviceThread::drain_fifos() {
  // A round that pops must overlap a push, which takes a trapped store (microseconds) while an
  // empty round takes nanoseconds: the bound only keeps a pathological producer from stalling the
  // data path.
  constexpr unsigned kMaxRounds = 1024;
  return rounds_until_quiet(kMaxRounds, [this] { return drain_fifos_once(); });
}

unsigned DeviceThread::drain_fifos_once() {
  unsigned work = 0;
  const unsigned used = fifo_slots_used_.load(std::memory_order_acquire);
  for (unsigned i = 0; i < used; ++i) {
    FifoSlot& slot = fifos_[i];
    doorbell::DoorbellFifo* fifo = slot.fifo.load(std::memory_order_acquire);
    if (fifo == nullptr) continue;
    doorbell::DoorbellRecord record;
    while (fifo->pop(record)) {
      slot.device->ring(record.context_id, record.offset, record.value);
      ++work;
    }
  }
  return work;
}

unsigned DeviceThread::pass() {
  unsigned work = drain_fifos();
  for (auto& slot : devices_) {
    Device* device = slot.load(std::memory_order_acquire);
    if (device == nullptr) break;
    work += device->poll();
  }
  for (auto& slot : pollers_) {
    Poller* poller = slot.load(std::memory_order_acquire);
    if (poller == nullptr) break;
    work += poller->poll();
  }
  passes_.fetch_add(1, std::memory_order_release);
  return work;
}

unsigned DeviceThread::step() {
  std::lock_guard<std::mutex> guard(step_lock_);
  return pass();
}

void DeviceThread::run() {
  unsigned idle = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const unsigned work = pass();
    if (work != 0) {
      idle = 0;
    } else if (++idle > kBusyPasses) {
      timespec nap{0, kIdleNapNs};
      nanosleep(&nap, nullptr);
    }
  }
}

}  // namespace mana::emu
