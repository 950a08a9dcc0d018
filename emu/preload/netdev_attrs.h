// SPDX-License-Identifier: BSD-3-Clause
// What the kernel answers about an emulated netdev that sysfs files alone cannot show
// (doc/hardware.md §9.24): a read of `speed` or `carrier` fails with EINVAL while the netdev is
// down (`flags` without IFF_UP), and the ethtool ioctl answers for it by name. Both read the run
// folder's files with libc directly, never through this library's interposers.
#pragma once

#include <net/if.h>

#include <string>

namespace mana::emu::preload {

// For open/fopen of `path`: an fd whose reads fail with EINVAL (an epoll fd: the kernel's read of
// a file without a read operation answers EINVAL) when `path` is the `speed` or `carrier` file of
// a netdev in the run folder that is down; -1 otherwise (open the file as usual).
int down_netdev_attr_fd(const char* path);

// A file of the run folder, read with libc (no interposer). False when it cannot be read.
bool read_attr_raw(const std::string& path, std::string* out);
// The `flags` file of the netdev folder `dir` says IFF_UP. False when unreadable.
bool netdev_dir_up(const std::string& dir);

// The netdev folder of the VF netdev `ifname` (R/sys/class/net/<ifname>, which follows renames),
// or "" when the emulator shows no VF netdev of that name (or its VF is removed). Synthetic
// interfaces are not answered for: the kernel's interface of that name (if any) answers.
std::string emulated_netdev_dir(const char* ifname);

// SIOCETHTOOL for an emulated netdev: ETHTOOL_GLINKSETTINGS (the two-step handshake of the
// link-mode word count; speed from `speed`, SPEED_UNKNOWN for -1; duplex full, port other, as
// mana's get_link_ksettings), ETHTOOL_GSET, ETHTOOL_GLINK (running and carrier). True with *ret
// set when answered, false when `req` names no emulated netdev or asks something else.
bool answer_ethtool(ifreq* req, int* ret);

}  // namespace mana::emu::preload
