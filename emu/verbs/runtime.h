// SPDX-License-Identifier: BSD-3-Clause
// Process-wide emulator state: the config, the emulated ibv_devices, each VF's device model (owned
// by the first process that opens one of its contexts) and the device thread. Control-path calls
// hold `lock()`; the data path never takes it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.h"
#include "control/control_server.h"
#include "device/device.h"
#include "device/device_thread.h"
#include "verbs/objects.h"

namespace mana::emu::verbs {

struct VfRuntime {
  unsigned index = 0;
  VfConfig config;
  std::unique_ptr<Device> device;
  int owner_lock_fd = -1;
  std::vector<EmuContext*> contexts;  // open contexts of this process
  // Hardware ids of the live SQs and RQs (listed by the control channel's `counters`).
  std::vector<uint32_t> sq_ids;
  std::vector<uint32_t> rq_ids;
};

// Adds / removes queue ids of a VfRuntime list (under Runtime::lock()).
void track_id(std::vector<uint32_t>& ids, uint32_t id);
void untrack_id(std::vector<uint32_t>& ids, uint32_t id);

// What another part of the process adds to the VFs: emu/preload joins in the synthetic NICs of
// emu/vmbus (a VF shares its ports' wires with them; its removal and return reach them too).
// Runtime calls these under lock() unless said otherwise.
struct VfHooks {
  // The wires the VF's device model uses; null when the device builds its own.
  std::function<std::unique_ptr<WireSet>(unsigned vf)> device_wires;
  // The control channel removed / added back the VF.
  std::function<void(unsigned vf, bool present)> presence_changed;
  // Without the lock, after presence_changed(vf, true): the VF is back at PCI address `pci`.
  std::function<void(const std::string& pci)> pci_added;
  // `netvsc-counters <vf> <port>`: the reply line.
  std::function<std::string(unsigned vf, unsigned port)> netvsc_counters;
};

class Runtime {
 public:
  // nullptr when MANA_EMU_CONFIG is unset or unreadable: the library is passive then.
  static Runtime* get();
  // Once, when the library loads (emu/preload): `hooks` answers this process's VfHooks, or null
  // when nothing else shares the VFs. Asked at each use, as the answer may be built late.
  static void set_vf_hooks(const VfHooks* (*hooks)());

  std::mutex& lock() { return lock_; }
  const EmuConfig& config() const { return config_; }
  bool poll_doorbells() const { return config_.doorbell == EmuConfig::kPoll; }
  // The user-space WR/CQE limit of the emulated libmana (hw libmana-max-wr; 0: none).
  uint32_t libmana_max_wr() const { return config_.hw.libmana_max_wr; }
  // The emulated libmana's CQ rule (hw libmana-cq-rule).
  HwBehaviour::LibmanaCqRule libmana_cq_rule() const { return config_.hw.libmana_cq_rule; }

  // Poll-mode doorbells: all SQs (all RQs) of a context share one slot of the doorbell page,
  // which a sampling device follows only with a single writer. False (with one line on stderr
  // naming the reason and the fix) when `live` queues of that kind already exist in poll mode.
  // Under lockstep any number is admitted and the context's page is held until the next step
  // (held_doorbells.h).
  bool admit_queue(EmuContext* ctx, const char* what, uint32_t live);
  // Lockstep with polled doorbells: several queues share a slot (held_doorbells.h).
  bool lockstep_poll() const { return poll_doorbells() && thread_.lockstep(); }
  // Counts held pages (held_doorbells.cpp), so that a step without any skips the lock.
  void doorbells_held(int delta) { held_pages_.fetch_add(delta, std::memory_order_relaxed); }
  // Lockstep, after a step: every held page is released (sampled again).
  void release_held_doorbells();

  const std::vector<EmuDevice*>& devices() const { return devices_; }
  bool vf_listed(unsigned vf) const;  // its sysfs entry exists (not hot-removed)
  VfRuntime& vf(unsigned index) { return *vfs_[index]; }
  unsigned vf_count() const { return static_cast<unsigned>(vfs_.size()); }

  // Under lock(): the VF's device model, created with the device thread on first use; errno
  // value on failure (EBUSY when another process runs this VF).
  int acquire_device(VfRuntime& vf, Device** out);
  void context_opened(EmuContext* ctx);
  void context_closed(EmuContext* ctx);
  DeviceThread& thread() { return thread_; }
  // Before a destroy call: every doorbell this process stored so far reaches its device (trap
  // mode: the device thread drains the FIFOs), so none names a queue that is already gone.
  void settle_doorbells();

  // After a hot removal (the control channel has stopped the VF's queues and moved its sysfs
  // entries): every open context of the VF gets IBV_EVENT_DEVICE_FATAL.
  void raise_device_fatal(unsigned vf);

  void shutdown();

 private:
  Runtime() = default;
  bool load(const char* path);
  void start_control(unsigned vf, Device* device);
  // The VF's PCI address now (it changes with `add --pci`): from its RDMA device's link.
  std::string current_pci(unsigned vf) const;
  std::vector<uint32_t> queue_ids(unsigned vf, std::vector<uint32_t> VfRuntime::*list);

  std::mutex lock_;
  EmuConfig config_;
  std::vector<std::unique_ptr<VfRuntime>> vfs_;
  std::vector<EmuDevice*> devices_;
  DeviceThread thread_;
  std::atomic<int> held_pages_{0};
  std::unique_ptr<ControlServer> control_;
};

// libibverbs' answer to a destroy command that failed with `rc`. After a hot removal the kernel
// answers EIO (the object was freed with the device); libibverbs turns that into success, and
// frees its own memory, only when RDMAV_ALLOW_DISASSOC_DESTROY (or MLX4_DEVICE_FATAL_CLEANUP other
// than "0") was in the environment when it initialised (doc/hardware.md §2.7).
int destroy_result(int rc);
// Latches that environment as libibverbs does on its first device listing.
void latch_disassociate_destroy();

// Queues an async event on a context and makes its async_fd readable.
void push_async_event(EmuContext* ctx, const ibv_async_event& event);

}  // namespace mana::emu::verbs
