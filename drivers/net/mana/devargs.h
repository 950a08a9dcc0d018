// SPDX-License-Identifier: BSD-3-Clause
// Device arguments of net_mana: `mac=<mac_addr>`, repeatable up to 8 times (DPDK's mana guide).
#pragma once

#include <cstddef>

#include <rte_ether.h>

struct rte_devargs;
struct rte_pci_addr;

namespace mana {

inline constexpr unsigned kMaxMacDevargs = 8;
inline constexpr const char* kDevargsMac = "mac";
inline constexpr const char* kDevargsRecoveryTimeout = "recovery_timeout";
inline constexpr const char* kDevargsTxStallTimeout = "tx_stall_timeout";
inline constexpr const char* kDevargsHelp =
    "mac=<mac_addr>, recovery_timeout=<seconds>, tx_stall_timeout=<seconds>";
inline constexpr unsigned kDefaultRecoveryTimeout = 600;  // recovery.h
inline constexpr unsigned kMaxRecoveryTimeout = 86400;
// The kernel's TX watchdog timeout for MANA (doc/hardware.md §2.12); tx_watchdog.h.
inline constexpr unsigned kDefaultTxStallTimeout = 15;
inline constexpr unsigned kMaxTxStallTimeout = 3600;

struct Devargs {
  unsigned mac_count = 0;  // 0: every port of the PCI function
  rte_ether_addr macs[kMaxMacDevargs] = {};
  // How long a port waits for its removed VF to come back (doc/guide.md); 0: no recovery.
  unsigned recovery_timeout_s = kDefaultRecoveryTimeout;
  // How long a TX queue may complete nothing while packets wait (doc/guide.md); 0: no watchdog.
  unsigned tx_stall_timeout_s = kDefaultTxStallTimeout;

  bool wants(const rte_ether_addr& mac) const;
};

// Parses `args` (may be null or empty). Returns 0, or -EINVAL with the reason in `error` (one line
// that says what to change).
int parse_devargs(const char* args, Devargs& out, char* error, size_t error_len);

// DPDK's EAL keeps every -a entry, but the PCI bus gives a device only the first one that names
// it (`used`); later ones for the same address are silently ignored. Logs one warning per ignored
// entry, naming its arguments and the fix; returns how many there were.
unsigned warn_ignored_allow_entries(const char* dev_name, const rte_pci_addr& addr,
                                    const rte_devargs* used);

}  // namespace mana
