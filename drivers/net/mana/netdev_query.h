// SPDX-License-Identifier: BSD-3-Clause
// Asking the kernel about a port's netdev where sysfs cannot answer. A DPDK port's netdev is down
// (the vPort has one user), and the kernel answers sysfs `speed` and `carrier` only while the
// netdev runs (doc/hardware.md §9.24); rtnetlink and the ethtool ioctl answer either way:
//  * RTM_GETLINK: IFLA_MTU, IFLA_MAX_MTU (§2.9), IFLA_CARRIER (the carrier flag, down or not),
//    IFLA_OPERSTATE (IF_OPER_DOWN while the netdev is down);
//  * SIOCETHTOOL ETHTOOL_GLINKSETTINGS: the speed mana's get_link_ksettings asks the NIC for (since
//    Linux 6.17; SPEED_UNKNOWN before, or when the NIC does not answer).
// Control path only: one socket per question.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mana {

struct LinkAttrs {
  uint32_t mtu = 0;      // IFLA_MTU, 0: absent
  uint32_t max_mtu = 0;  // IFLA_MAX_MTU, 0: absent
  int carrier = -1;      // IFLA_CARRIER 0 or 1, -1: absent
  int operstate = -1;    // IFLA_OPERSTATE (IF_OPER_*), -1: absent
};

// Parses the answer to an RTM_GETLINK request: 0 with `out` filled, or a negative errno (the
// kernel's NLMSG_ERROR, -EBADMSG for a malformed answer).
int parse_link_reply(const void* buf, size_t len, LinkAttrs* out);

// RTM_GETLINK for the netdev `ifname`: 0 with `out` filled, or a negative errno.
int query_link(const char* ifname, LinkAttrs* out);

// The speed ETHTOOL_GLINKSETTINGS reports for `ifname`, in Mbit/s: above 0, or -1 when the kernel
// reports none (SPEED_UNKNOWN, 0) or cannot be asked (no such interface, no ethtool support).
int64_t ethtool_speed_mbps(const char* ifname);

// A speed field of struct ethtool_link_settings as Mbit/s: -1 for SPEED_UNKNOWN (0xffffffff) and 0.
int64_t ethtool_speed_value(uint32_t speed);

}  // namespace mana
