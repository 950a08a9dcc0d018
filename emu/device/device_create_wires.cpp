// SPDX-License-Identifier: BSD-3-Clause
// Device::create with the wires named in the config (kept apart so that users of the other overload
// do not need the wire library).
#include <cstdio>

#include "device/device.h"

namespace mana::emu {

std::unique_ptr<Device> Device::create(const VfConfig& config) {
  std::vector<WirePort> ports;
  for (const PortConfig& p : config.ports) ports.push_back({p.wire, p.mac, p.ipv4});
  std::string error;
  auto wires = make_port_wires(ports.data(), static_cast<unsigned>(ports.size()), &error);
  if (!wires) {
    std::fprintf(stderr, "mana-emu: %s: bad wire configuration: %s\n", config.pci_addr.c_str(),
                 error.c_str());
    return nullptr;
  }
  return create(config, std::move(wires));
}

}  // namespace mana::emu
