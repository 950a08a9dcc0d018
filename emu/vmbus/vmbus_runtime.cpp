// SPDX-License-Identifier: BSD-3-Clause
#include "vmbus/vmbus_runtime.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace mana::emu::vmbus {

namespace {

// The host announces a VF that came back after this delay (OpenVMM's VF_DEVICE_DELAY,
// doc/hardware.md §11.2 "VF association").
constexpr unsigned kVfReaddDelayMs = 1000;

// A WireSet over endpoints owned by VmbusRuntime (the device model's view of shared wires).
class WireView final : public WireSet {
 public:
  explicit WireView(std::vector<WireEndpoint*> endpoints) : endpoints_(std::move(endpoints)) {}
  WireEndpoint* endpoint(unsigned port) override {
    return port < endpoints_.size() ? endpoints_[port] : nullptr;
  }

 private:
  std::vector<WireEndpoint*> endpoints_;
};

// The host's open behaviours from `--hw` (doc/emulator.md "The synthetic NIC").
void apply_hw(const HwBehaviour& hw, netvsc::NetvspConfig* config) {
  using C = HwBehaviour::NetvscCompletion;
  config->set_datapath_completion =
      hw.netvsc_datapath_completion == C::kNever    ? netvsc::SetDatapathCompletion::kNever
      : hw.netvsc_datapath_completion == C::kAlways ? netvsc::SetDatapathCompletion::kAlways
                                                    : netvsc::SetDatapathCompletion::kAsRequested;
  config->vfassoc_point = hw.netvsc_vfassoc_at_filter ? netvsc::VfAssocPoint::kPacketFilter
                                                      : netvsc::VfAssocPoint::kRndisInit;
  config->group_frames_synthetic = !hw.netvsc_group_frames_vf;
}

}  // namespace

VmbusRuntime::VmbusRuntime(const EmuConfig& config, DeviceThread& thread)
    : config_(config), thread_(thread) {
  for (const SyntheticNic& info : synthetic_nics(config_)) {
    Nic nic;
    nic.info = info;
    nics_.push_back(std::move(nic));
  }
  wires_.resize(config_.vfs.size());
}

VmbusRuntime::VfWires* VmbusRuntime::wires(unsigned vf) {
  if (vf >= wires_.size()) return nullptr;
  if (!wires_[vf]) {
    const VfConfig& cfg = config_.vfs[vf];
    std::vector<WirePort> ports;
    for (const PortConfig& p : cfg.ports) ports.push_back({p.wire, p.mac, p.ipv4});
    std::string error;
    auto real = make_port_wires(ports.data(), static_cast<unsigned>(ports.size()), &error);
    if (!real) {
      std::fprintf(stderr, "mana-emu: %s: bad wire configuration: %s\n", cfg.pci_addr.c_str(),
                   error.c_str());
      return nullptr;
    }
    auto w = std::make_unique<VfWires>();
    for (unsigned p = 0; p < cfg.ports.size(); ++p)
      if (cfg.ports[p].uio_netvsc) {
        w->shared[p] = std::make_unique<SharedPortWire>(real->endpoint(p));
        w->shared[p]->tx_cap().set(cfg.tx_pps);  // capped before the VF's device exists too
      }
    w->real = std::move(real);
    wires_[vf] = std::move(w);
  }
  return wires_[vf].get();
}

std::unique_ptr<WireSet> VmbusRuntime::device_wires(unsigned vf) {
  VfWires* w = wires(vf);
  if (w == nullptr) return nullptr;
  std::vector<WireEndpoint*> endpoints;
  for (unsigned p = 0; p < config_.vfs[vf].ports.size(); ++p)
    endpoints.push_back(w->shared[p] ? w->shared[p]->vf_endpoint() : w->real->endpoint(p));
  return std::make_unique<WireView>(std::move(endpoints));
}

void VmbusRuntime::uio_opened(unsigned index) {
  Nic& nic = nics_[index];
  if (nic.open_fds++ != 0) return;
  if (!nic.tried_owner) {
    nic.tried_owner = true;
    // One process hosts the NIC: the first to open it (a DPDK secondary only maps it).
    const std::string lock = uio_stand_in(config_.root, index) + ".owner";
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
      nic.owner_fd = fd;
      VfWires* w = wires(nic.info.vf);
      netvsc::NetvspConfig config;
      const VfConfig& vf = config_.vfs[nic.info.vf];
      config.mac = vf.ports[nic.info.port].mac;
      apply_hw(vf.hw, &config);
      auto host = w == nullptr ? nullptr
                               : std::make_unique<SyntheticNicHost>(config_.root, nic.info, config,
                                                                    w->shared[nic.info.port].get());
      std::string error;
      if (host && host->map(&error)) {
        nic.host = std::move(host);
        thread_.add_poller(nic.host.get());
      } else if (host) {
        std::fprintf(stderr, "mana-emu: synthetic NIC %s: %s\n", nic.info.uuid.c_str(),
                     error.c_str());
      }
    } else if (fd >= 0) {
      ::close(fd);
    }
  }
  if (nic.host) nic.host->opened();
}

void VmbusRuntime::uio_closed(unsigned index) {
  Nic& nic = nics_[index];
  if (nic.open_fds == 0 || --nic.open_fds != 0) return;
  if (nic.host) nic.host->closed();
}

void* VmbusRuntime::map(unsigned index, void* addr, size_t len, int prot, int flags, off_t offset) {
  const unsigned map = static_cast<unsigned>(offset / 4096);
  if (offset % 4096 != 0 || map >= kVmbusMaps || len > vmbus_map_size(map)) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  const std::string path = vmbus_map_file(config_.root, nics_[index].info, map);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return MAP_FAILED;
  void* p = reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, 0));
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return p;
}

void VmbusRuntime::vf_presence_changed(unsigned vf, bool present) {
  for (Nic& nic : nics_) {
    if (nic.info.vf != vf) continue;
    if (nic.host) {
      nic.host->set_vf_present(present, present ? kVfReaddDelayMs : 0);
    } else if (VfWires* w = wires(vf)) {
      w->shared[nic.info.port]->set_vf_present(present);
    }
  }
}

std::string VmbusRuntime::counters(unsigned vf, unsigned port) {
  for (Nic& nic : nics_) {
    if (nic.info.vf != vf || nic.info.port != port) continue;
    if (!nic.host)
      return "error the synthetic NIC of VF " + std::to_string(vf) + " port " +
             std::to_string(port) + " is not hosted by this process";
    return "ok " + nic.host->counters_json();
  }
  return "error VF " + std::to_string(vf) + " port " + std::to_string(port) +
         " has no synthetic NIC (mana-emu run --uio-netvsc)";
}

}  // namespace mana::emu::vmbus
