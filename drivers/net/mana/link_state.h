// SPDX-License-Identifier: BSD-3-Clause
// The port's link as the kernel shows it (doc/hardware.md §9.24, doc/guide.md "Link status and
// speed"), read on the control path only (link_update, and the link watch alarm below), never per
// packet. A DPDK port's netdev is down, and the kernel answers the sysfs files `speed` and
// `carrier` (EINVAL) only while it runs, so:
//  * speed: the ethtool ioctl (ETHTOOL_GLINKSETTINGS answers a down netdev: since Linux 6.17 the
//    NIC's speed), then sysfs `speed`; 100G where neither says anything;
//  * status: sysfs `carrier` while the netdev runs; while it is down, the carrier flag rtnetlink
//    reports (IFLA_CARRIER). Since Linux 6.19 that flag is on from probe and follows the NIC's link
//    events; before, mana turned it off with the netdev. So a 0 on a down netdev means "link down"
//    only once that netdev has read 1; before that it is no news (the link counts as up).
// One line per port says where its link comes from, the first time the netdev reads as down.
//
// The netdev is found afresh at each read, by its dev_port under the RDMA device's PCI function
// (ib_sysfs.h), so a netdev renamed after probe is still read (and named in messages), and never
// the synthetic (hv_netvsc) interface that shares its MAC: that one sits on the VMBus device, not
// under the PCI function.
//
// The link watch: with intr_conf.lsc, an EAL alarm of the primary looks at the link every
// kLinkWatchMs while the port is started, and raises RTE_ETH_EVENT_INTR_LSC when its status or
// speed changed (a NIC link event, a VF removal or its return). Nothing in the bursts.
#pragma once

#include <cstdint>

struct rte_eth_dev;

namespace mana {

struct PortPriv;

inline constexpr uint32_t kLinkWatchMs = 250;

// What sysfs says of the netdev; -1 where it says nothing (no file, a read error such as the
// EINVAL of a netdev that is down, or a value the kernel uses for "unknown").
struct NetdevLink {
  int64_t speed_mbps = -1;
  int carrier = -1;
};

// Parses the text of a sysfs `speed` file: Mbit/s above 0, else -1 (the kernel's -1 for
// SPEED_UNKNOWN, an empty or malformed file).
int64_t parse_netdev_speed(const char* text);
// Parses the text of a sysfs `carrier` file: 1 or 0, else -1.
int parse_netdev_carrier(const char* text);
// The carrier of a netdev that is down, from rtnetlink's IFLA_CARRIER (`reported`: 0, 1, or -1
// when absent): 1 once on (and `seen_on` remembers it), 0 only after it was on, else -1.
int down_netdev_carrier(int reported, bool* seen_on);

// Reads the port's netdev (primary: follows a rename, see above). Control path.
NetdevLink netdev_link_read(PortPriv& priv);

// The link_update operation: the netdev's speed and carrier; down while the port is stopped or
// the VF is removed.
int link_update(rte_eth_dev* dev, int wait_to_complete);

// dev_start (end) and dev_stop (start): arms / cancels the port's link watch (only with
// intr_conf.lsc, in the primary). Stop waits for a look that is running.
void link_watch_start(rte_eth_dev* dev);
void link_watch_stop(rte_eth_dev* dev);

}  // namespace mana
