// SPDX-License-Identifier: BSD-3-Clause
// A second process ringing a doorbell through a context's cmd_fd, as a DPDK secondary does with
// the fd the primary passes over rte_mp: this test binary re-executed with
// `--secondary-doorbell=<fd>,<offset>,<value>` maps the fd at offset 0, checks the mapping's mode
// and stores the value.
#pragma once

#include <cstdint>
#include <string>

namespace mana::emu::test {

// In the child: handles the option if present (returns the exit status), else -1.
int run_secondary_if_asked(int argc, char** argv);

// In the parent: runs the child with a copy of `cmd_fd` and waits up to `timeout_ms`. Returns the
// child's exit status (0: stored through a mapping of the expected mode), or -1.
int ring_from_secondary(int cmd_fd, uint32_t offset, uint64_t value, bool expect_read_only,
                        int timeout_ms);

// In the parent: runs the child, which opens the VF at `pci` while this process runs it (as DPDK
// 24.11's net_mana does in a secondary), queries it, expects alloc_pd to be refused with EOPNOTSUPP
// and closes it. Returns the child's exit status (0: all as expected), or -1.
int open_from_secondary(const std::string& pci, int timeout_ms);

// The permissions column of /proc/self/maps for the mapping holding `addr` ("" if none).
std::string mapping_perms(const void* addr);

}  // namespace mana::emu::test
