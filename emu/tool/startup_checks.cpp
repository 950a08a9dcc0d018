// SPDX-License-Identifier: BSD-3-Clause
#include "tool/startup_checks.h"

#include <sched.h>
#include <unistd.h>

#include "wire/endpoints.h"

namespace mana::emu {

namespace {

// "0-3,6" for the CPUs of `set`.
std::string cpu_list(const cpu_set_t& set) {
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!out.empty()) out += ",";
    out += std::to_string(cpu);
    if (last > cpu) out += "-" + std::to_string(last);
    cpu = last;
  }
  return out;
}

}  // namespace

bool check_device_cpu(int cpu, std::string* error) {
  if (cpu < 0) return true;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return true;  // the thread will say
  if (CPU_ISSET(cpu, &allowed)) return true;
  const std::string n = std::to_string(cpu);
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  if (configured > 0 && cpu >= configured) {
    *error = "--device-cpu " + n + ": this machine has no CPU " + n + " (" +
             std::to_string(configured) + " CPUs); pick one of " + cpu_list(allowed);
  } else {
    *error = "--device-cpu " + n + ": CPU " + n +
             " is not in this process's affinity mask (taskset, cgroup cpuset); pick one of " +
             cpu_list(allowed);
  }
  return false;
}

bool check_tap_wires(const EmuConfig& config, std::string* error) {
  for (const VfConfig& vf : config.vfs) {
    for (size_t p = 0; p < vf.ports.size(); ++p) {
      const std::string& wire = vf.ports[p].wire;
      if (!wire.starts_with("tap:")) continue;
      std::string why;
      if (open_tap_endpoint(wire.substr(4), &why) == nullptr) {
        *error = "--vf " + vf.pci_addr + " port " + std::to_string(p) + ": " + why;
        return false;
      }
    }
  }
  return true;
}

}  // namespace mana::emu
