// SPDX-License-Identifier: BSD-3-Clause
#include <random>

#include "device/device_impl.h"

namespace mana::emu {

namespace {
constexpr size_t kMaxPorts = 8;
}

std::unique_ptr<Device> Device::create(const VfConfig& config, std::unique_ptr<WireSet> wires) {
  if (config.ports.empty() || config.ports.size() > kMaxPorts || !wires) return nullptr;
  for (unsigned i = 0; i < config.ports.size(); ++i)
    if (wires->endpoint(i) == nullptr) return nullptr;
  std::random_device seed;
  return std::make_unique<DeviceImpl>(config, std::move(wires), seed());
}

}  // namespace mana::emu
