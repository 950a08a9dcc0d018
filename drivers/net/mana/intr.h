// SPDX-License-Identifier: BSD-3-Clause
// Device events (doc/hardware.md §2.7): the verbs async fd is watched by the EAL interrupt thread;
// a fatal device event (VF hot-removed) starts the recovery (recovery.h).
#pragma once

struct rte_eth_dev;

namespace mana {

struct PortPriv;

int intr_install(rte_eth_dev* dev);
void intr_uninstall(PortPriv& priv);

}  // namespace mana
