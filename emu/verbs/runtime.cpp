// SPDX-License-Identifier: BSD-3-Clause
#include "verbs/runtime.h"

#include "config/sysfs_tree.h"
#include "verbs/held_doorbells.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mana::emu::verbs {

namespace {

void copy_name(char* dst, size_t cap, const std::string& src) {
  snprintf(dst, cap, "%s", src.c_str());
}

EmuDevice* make_device(const EmuConfig& config, const IbDeviceInfo& info, unsigned uverbs) {
  auto* dev = new EmuDevice();
  dev->ibv.node_type = IBV_NODE_CA;
  dev->ibv.transport_type = IBV_TRANSPORT_IB;
  copy_name(dev->ibv.name, sizeof(dev->ibv.name), info.name);
  copy_name(dev->ibv.dev_name, sizeof(dev->ibv.dev_name), "uverbs" + std::to_string(uverbs));
  copy_name(dev->ibv.dev_path, sizeof(dev->ibv.dev_path), uverbs_dir(config.root, uverbs));
  copy_name(dev->ibv.ibdev_path, sizeof(dev->ibv.ibdev_path),
            ib_device_dir(config.root, info.name));
  dev->vf = info.vf;
  dev->rnic = info.kind == IbDeviceInfo::kRnic;
  dev->vendor_part_id = info.vendor_part_id;
  dev->port_count = dev->rnic ? 1 : static_cast<uint32_t>(config.vfs[info.vf].ports.size());
  dev->raw_packet_caps = info.kind == IbDeviceInfo::kEthernet ? IBV_RAW_PACKET_CAP_IP_CSUM : 0;
  return dev;
}

std::atomic<Runtime*> g_built{nullptr};  // for the exit-time destructor: never builds one

const VfHooks* (*g_vf_hooks)() = nullptr;

const VfHooks* vf_hooks() { return g_vf_hooks != nullptr ? g_vf_hooks() : nullptr; }

}  // namespace

Runtime* Runtime::get() {
  // Built once and never destroyed: other libraries' destructors may still call into us at exit.
  static Runtime* runtime = []() -> Runtime* {
    const char* path = getenv("MANA_EMU_CONFIG");
    if (path == nullptr || *path == '\0') return nullptr;
    auto* r = new Runtime();
    if (!r->load(path)) {
      delete r;
      return nullptr;
    }
    g_built.store(r);
    return r;
  }();
  return runtime;
}

void Runtime::set_vf_hooks(const VfHooks* (*hooks)()) { g_vf_hooks = hooks; }

bool Runtime::load(const char* path) {
  std::string error;
  if (!load_config(path, &config_, &error)) {
    fprintf(stderr, "mana-emu: %s: %s (emulation off)\n", path, error.c_str());
    return false;
  }
  for (unsigned i = 0; i < config_.vfs.size(); ++i) {
    auto vf = std::make_unique<VfRuntime>();
    vf->index = i;
    vf->config = config_.vfs[i];
    for (PortConfig& port : vf->config.ports)
      port.mtu_file = pci_device_dir(config_, i) + "/net/" + port.ifname + "/mtu";
    vfs_.push_back(std::move(vf));
  }
  // mana-emu run --lockstep: the application runs the device model (lockstep.cpp).
  const char* lockstep = getenv("MANA_EMU_LOCKSTEP");
  thread_.set_lockstep(lockstep != nullptr && strcmp(lockstep, "1") == 0);
  unsigned uverbs = 0;
  for (const IbDeviceInfo& info : ib_devices(config_))
    devices_.push_back(make_device(config_, info, uverbs++));
  return true;
}

bool Runtime::admit_queue(EmuContext* ctx, const char* what, uint32_t live) {
  if (lockstep_poll()) return hold_doorbells(ctx);
  if (live == 0 || !poll_doorbells()) return true;
  fprintf(stderr,
          "mana-emu: a second %s on one verbs context is refused with --doorbell poll: its "
          "doorbells would share one slot of the doorbell page and be lost; use --doorbell trap\n",
          what);
  return false;
}

// By its RDMA device folder, whose name stays when `add --pci` brings the VF back on another PCI
// address (this process's copy of the config keeps the old one). libibverbs lists a device only
// with its uverbs device (ib_uverbs) and a provider whose driver id is the kernel's
// (doc/hardware.md §6.2): libmana's is kRdmaDriverMana.
bool Runtime::vf_listed(unsigned vf) const {
  if (config_.kernel.driver_id != kRdmaDriverMana) return false;
  for (const EmuDevice* dev : devices_)
    if (dev->vf == vf)
      return access(dev->ibv.ibdev_path, F_OK) == 0 && access(dev->ibv.dev_path, F_OK) == 0;
  return false;
}

int Runtime::acquire_device(VfRuntime& vf, Device** out) {
  if (!vf.device) {
    // One process runs a VF's device model: the first to open one of its contexts.
    const std::string lock_path = config_.root + "/vf" + std::to_string(vf.index) + ".owner";
    int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      return EBUSY;  // the caller opens a query-only context (context.cpp)
    }
    // A VF with synthetic NICs shares its ports' wires with them (emu/vmbus).
    const VfHooks* hooks = vf_hooks();
    std::unique_ptr<WireSet> shared = hooks ? hooks->device_wires(vf.index) : nullptr;
    std::unique_ptr<Device> device =
        shared ? Device::create(vf.config, std::move(shared)) : Device::create(vf.config);
    if (!device) {
      close(fd);
      return ENODEV;
    }
    device->set_poll_doorbells(poll_doorbells());
    device->set_shared_doorbell_slots(lockstep_poll());
    device->set_disassociate_destroy(destroy_result(EIO) == 0);
    vf.owner_lock_fd = fd;
    vf.device = std::move(device);
    thread_.set_cpu(config_.device_cpu);
    thread_.add_device(vf.device.get());
    if (!config_.control.empty()) start_control(vf.index, vf.device.get());
  }
  *out = vf.device.get();
  return 0;
}

void Runtime::settle_doorbells() {
  // Lockstep: held pages' stores wait in FIFOs too (drained here, no thread to wait for).
  if (!poll_doorbells() || thread_.lockstep()) thread_.settle();
}

void Runtime::release_held_doorbells() {
  if (held_pages_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> guard(lock_);
  for (auto& vf : vfs_)
    for (EmuContext* ctx : vf->contexts) release_doorbells(ctx);
}

void Runtime::context_opened(EmuContext* ctx) { ctx->vf->contexts.push_back(ctx); }

void Runtime::context_closed(EmuContext* ctx) {
  auto& list = ctx->vf->contexts;
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (*it == ctx) {
      list.erase(it);
      break;
    }
  }
}

void Runtime::raise_device_fatal(unsigned index) {
  std::lock_guard<std::mutex> guard(lock_);
  if (index >= vfs_.size()) return;
  for (EmuContext* ctx : vfs_[index]->contexts) {
    ibv_async_event event{};
    event.event_type = IBV_EVENT_DEVICE_FATAL;
    push_async_event(ctx, event);
  }
}

void Runtime::start_control(unsigned vf, Device* device) {
  if (!control_) {
    ControlHooks hooks;
    hooks.presence_changed = [this](uint32_t index, bool present) {
      if (!present) {
        // A late event (hw fatal-event-delay-ms) holds `remove`'s answer back: the control
        // thread waits, the process's threads run on and see EIO from the VF's contexts.
        if (index < config_.vfs.size() && config_.vfs[index].hw.fatal_event_delay_ms != 0)
          std::this_thread::sleep_for(
              std::chrono::milliseconds(config_.vfs[index].hw.fatal_event_delay_ms));
        raise_device_fatal(index);
      }
      if (const VfHooks* shared = vf_hooks()) {
        {
          std::lock_guard<std::mutex> guard(lock_);
          shared->presence_changed(index, present);
        }
        // The kernel's PCI hot-add event, which net_netvsc waits for (doc/emulator.md "The
        // synthetic NIC").
        if (present) shared->pci_added(current_pci(index));
      }
    };
    if (const VfHooks* shared = vf_hooks()) {
      hooks.netvsc_counters = [this, shared](uint32_t index, uint32_t port) {
        std::lock_guard<std::mutex> guard(lock_);
        return shared->netvsc_counters(index, port);
      };
    }
    hooks.sq_ids = [this](uint32_t index) { return queue_ids(index, &VfRuntime::sq_ids); };
    hooks.rq_ids = [this](uint32_t index) { return queue_ids(index, &VfRuntime::rq_ids); };
    auto server = std::make_unique<ControlServer>(config_, std::move(hooks));
    std::string error;
    if (!server->start(config_.control, &error)) {
      fprintf(stderr, "mana-emu: control channel %s: %s\n", config_.control.c_str(), error.c_str());
      return;
    }
    control_ = std::move(server);
  }
  control_->add_vf(vf, device);
}

std::string Runtime::current_pci(unsigned vf) const {
  for (const EmuDevice* dev : devices_) {
    if (dev->vf != vf) continue;
    char target[PATH_MAX];
    const std::string link = std::string(dev->ibv.ibdev_path) + "/device";
    const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
    if (n <= 0) break;
    target[n] = '\0';
    const char* slash = strrchr(target, '/');
    return slash ? slash + 1 : target;
  }
  return config_.vfs[vf].pci_addr;
}

std::vector<uint32_t> Runtime::queue_ids(unsigned index, std::vector<uint32_t> VfRuntime::*list) {
  std::lock_guard<std::mutex> guard(lock_);
  if (index >= vfs_.size()) return {};
  return (*vfs_[index]).*list;
}

void track_id(std::vector<uint32_t>& ids, uint32_t id) { ids.push_back(id); }

void untrack_id(std::vector<uint32_t>& ids, uint32_t id) {
  for (auto it = ids.begin(); it != ids.end(); ++it) {
    if (*it == id) {
      ids.erase(it);
      return;
    }
  }
}

void Runtime::shutdown() {
  if (control_) control_->stop();
  thread_.stop();
}

namespace {
bool allow_disassociate_destroy() {
  static const bool allowed = [] {
    bool allow = false;
    if (const char* v = getenv("MLX4_DEVICE_FATAL_CLEANUP")) allow = strcmp(v, "0") != 0;
    if (getenv("RDMAV_ALLOW_DISASSOC_DESTROY") != nullptr) allow = true;
    return allow;
  }();
  return allowed;
}
}  // namespace

void latch_disassociate_destroy() { (void)allow_disassociate_destroy(); }

int destroy_result(int rc) { return rc == EIO && allow_disassociate_destroy() ? 0 : rc; }

void push_async_event(EmuContext* ctx, const ibv_async_event& event) {
  std::lock_guard<std::mutex> guard(ctx->async_lock);
  ctx->async_events.push_back(event);
  const uint64_t one = 1;
  (void)!write(ctx->vctx.context.async_fd, &one, sizeof(one));
}

namespace {
// Stops the device thread before the process tears down the memory it reads.
__attribute__((destructor)) void stop_device_thread() {
  if (Runtime* r = g_built.load()) r->shutdown();
}
}  // namespace

}  // namespace mana::emu::verbs
