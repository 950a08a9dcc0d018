// SPDX-License-Identifier: BSD-3-Clause
// make_wires(): turns the ports' wire specs into endpoints.
#include <string_view>
#include <vector>

#include "wire/endpoints.h"

namespace mana::emu {
namespace {

class PortWires final : public WireSet {
 public:
  explicit PortWires(unsigned count) : endpoints_(count) {}
  WireEndpoint* endpoint(unsigned port) override {
    return port < endpoints_.size() ? endpoints_[port].get() : nullptr;
  }
  std::vector<std::unique_ptr<WireEndpoint>>& endpoints() { return endpoints_; }

 private:
  std::vector<std::unique_ptr<WireEndpoint>> endpoints_;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::unique_ptr<WireSet> make_port_wires(const WirePort* ports, unsigned count,
                                         std::string* error) {
  auto wires = std::make_unique<PortWires>(count);
  auto& endpoints = wires->endpoints();
  auto spec_of = [&](unsigned port) -> const std::string& { return ports[port].spec; };
  for (unsigned port = 0; port < count; ++port) {
    const std::string& spec = spec_of(port);
    const std::string where = "port " + std::to_string(port) + ": ";
    std::string why;
    if (spec == "pair") {
      const unsigned partner = port ^ 1u;
      if (partner >= count || spec_of(partner) != "pair") {
        *error = where + "wire 'pair' joins ports " + std::to_string(port & ~1u) + " and " +
                 std::to_string(port | 1u) + ", and both need wire 'pair'";
        return nullptr;
      }
      if (port > partner) continue;  // built with its partner
      auto [a, b] = make_pair_endpoints(&why);
      endpoints[port] = std::move(a);
      endpoints[partner] = std::move(b);
    } else if (spec == "loop") {
      endpoints[port] = make_loop_endpoint(&why);
    } else if (spec == "null") {
      endpoints[port] = make_null_endpoint();
    } else if (starts_with(spec, "tap:")) {
      endpoints[port] = open_tap_endpoint(spec.substr(4), &why);
    } else if (starts_with(spec, "shm:")) {
      endpoints[port] = open_shm_endpoint(spec.substr(4), &why);
    } else if (starts_with(spec, "fabric:")) {
      endpoints[port] =
          open_fabric_endpoint(spec.substr(7), ports[port].mac, ports[port].ipv4, &why);
    } else {
      *error = where + "unknown wire '" + spec +
               "' (expected loop, pair, null, tap:<ifname>, shm:<name> or fabric:<name>)";
      return nullptr;
    }
    if (!endpoints[port]) {
      *error = where + why;
      return nullptr;
    }
  }
  return wires;
}

std::unique_ptr<WireSet> make_wires(const std::string* specs, unsigned count, std::string* error) {
  std::vector<WirePort> ports(count);
  for (unsigned port = 0; port < count; ++port) ports[port].spec = specs[port];
  return make_port_wires(ports.data(), count, error);
}

}  // namespace mana::emu
