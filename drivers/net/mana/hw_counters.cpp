// SPDX-License-Identifier: BSD-3-Clause
#include "hw_counters.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "mana_log.h"
#include "priv.h"

namespace mana {
namespace {

// The kernel's value, or false when the file cannot be read or parsed.
bool read_counter(const char* path, uint64_t* out) {
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return false;
  const bool ok = std::fscanf(f, "%" SCNu64, out) == 1;
  std::fclose(f);
  return ok;
}

constexpr uint32_t kSaidUnreadable = 1;
constexpr uint32_t kSaidNetdevDown = 2;

// Whether the port's netdev is down: <ibdev_path>/device/net/<if>/operstate, next to the counter.
bool netdev_down(const PortPriv& priv) {
  char path[sizeof(priv.rx_missed_path)];
  snprintf(path, sizeof(path), "%s", priv.rx_missed_path);
  char* stats = strstr(path, "/statistics/");
  if (stats == nullptr) return false;
  snprintf(stats, sizeof(path) - static_cast<size_t>(stats - path), "/operstate");
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return false;
  char state[16] = "";
  const bool down = std::fscanf(f, "%15s", state) == 1 && strcmp(state, "down") == 0;
  std::fclose(f);
  return down;
}

}  // namespace

void hw_counters_attach(PortPriv& priv, const char* ibdev_path) {
  snprintf(priv.rx_missed_path, sizeof(priv.rx_missed_path),
           "%s/device/net/%s/statistics/rx_missed_errors", ibdev_path, priv.ifname);
}

uint64_t hw_rx_missed(PortPriv& priv) {
  uint64_t v = 0;
  if (!read_counter(priv.rx_missed_path, &v)) {
    // Once per port: an application polls stats every second.
    if ((__atomic_fetch_or(&priv.rx_missed_logged, kSaidUnreadable, __ATOMIC_RELAXED) &
         kSaidUnreadable) == 0)
      MANA_DRV_LOG(INFO,
                   "port %u: cannot read %s (%s): imissed counts no NIC drops (doc/guide.md, "
                   "\"Stats\")",
                   priv.port_id, priv.rx_missed_path, strerror(errno));
    return 0;
  }
  // The kernel fills the counter only while the netdev is up, and a DPDK port needs it down
  // (doc/hardware.md §2.11): once per port, say why imissed stays 0.
  if ((__atomic_load_n(&priv.rx_missed_logged, __ATOMIC_RELAXED) & kSaidNetdevDown) == 0 &&
      netdev_down(priv) &&
      (__atomic_fetch_or(&priv.rx_missed_logged, kSaidNetdevDown, __ATOMIC_RELAXED) &
       kSaidNetdevDown) == 0)
    MANA_DRV_LOG(NOTICE,
                 "port %u: imissed counts no NIC drops while %s is down: the kernel fills "
                 "rx_missed_errors only while its netdev is up (doc/hardware.md §2.11)",
                 priv.port_id, priv.ifname);
  const uint64_t base = __atomic_load_n(&priv.rx_missed_base, __ATOMIC_RELAXED);
  // Below the base: the kernel's counter restarted (a new function after a re-add).
  return v >= base ? v - base : v;
}

void hw_counters_reset(PortPriv& priv) {
  uint64_t v = 0;
  if (read_counter(priv.rx_missed_path, &v))
    __atomic_store_n(&priv.rx_missed_base, v, __ATOMIC_RELAXED);
}

}  // namespace mana
