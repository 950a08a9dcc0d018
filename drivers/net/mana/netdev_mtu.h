// SPDX-License-Identifier: BSD-3-Clause
// The MTU lives on the port's kernel netdev (doc/hardware.md §2.9): its max MTU (the adapter's,
// rtnetlink IFLA_MAX_MTU, netdev_query.h) bounds what a port may set, and the MTU itself is set
// through the netdev's sysfs `mtu` file, which the kernel applies with dev_set_mtu. Control path
// only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "netdev_query.h"

namespace mana {

struct PortPriv;

// The MTU of a netdev whose max MTU cannot be read (a kernel before IFLA_MAX_MTU, no netlink).
inline constexpr uint32_t kFallbackMaxMtu = 1500;

// Finds the netdev's sysfs `mtu` file under `ibdev_path` and asks the kernel for its max MTU
// (priv.max_mtu; kFallbackMaxMtu with one log line when it cannot). After probe and re-add.
void netdev_mtu_attach(PortPriv& priv, const char* ibdev_path);
// The netdev's current MTU, or 0 when its file cannot be read.
uint32_t netdev_mtu_read(const PortPriv& priv);
// Writes `mtu` to the netdev (the kernel refuses above its max MTU, or without CAP_NET_ADMIN):
// 0 or a negative errno.
int netdev_mtu_write(const PortPriv& priv, uint32_t mtu);

}  // namespace mana
