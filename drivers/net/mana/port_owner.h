// SPDX-License-Identifier: BSD-3-Clause
// Whether another driver owns our port (rte_eth_dev_owner_set): DPDK's netvsc PMD takes its VF so,
// as failsafe and bonding take their sub-devices. The owner handles removals and the answers of
// the calls it makes on the port itself (doc/guide.md "Under DPDK's netvsc PMD").
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana {

bool owned_by_another_driver(uint16_t port_id);

// The owner's name (rte_eth_dev_owner.name: net_netvsc gives its VMBus device's) into `buf`, for
// log lines; false, and `buf` empty, when no other driver owns the port.
bool port_owner_name(uint16_t port_id, char* buf, size_t len);

// What happens to a removed VF's port under an owner, as the tail of a log line: the owner is
// told (RTE_ETH_EVENT_INTR_RMV) and handles the removal, which DPDK's netvsc PMD does by closing
// the port and probing the VF again when it is back. Empty when no other driver owns the port.
// Into `buf` (kOwnerNoteLen bytes is enough); returns `buf`.
inline constexpr size_t kOwnerNoteLen = 256;
const char* owner_removal_note(uint16_t port_id, char* buf, size_t len);

}  // namespace mana
