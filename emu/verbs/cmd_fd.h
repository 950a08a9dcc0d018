// SPDX-License-Identifier: BSD-3-Clause
// A context's cmd_fd: a memfd named "mana-emu-ctx-<vf>-<n>" whose page 0 is the doorbell page
// (what libmana and DPDK secondaries mmap at offset 0), page 1 a header and the pages after it the
// doorbell FIFO of trap mode. Any process holding the fd (DPDK passes it over rte_mp) can find the
// context id, the mode and the FIFO from the fd alone.
#pragma once

#include <cstddef>
#include <cstdint>

#include "doorbell/doorbell_fifo.h"

namespace mana::emu::verbs {

constexpr size_t kDoorbellPageBytes = 4096;
constexpr size_t kCmdHeaderOffset = 4096;
constexpr size_t kCmdFifoOffset = 8192;
constexpr uint32_t kCmdFifoCapacity = 4096;  // records; push spins (never drops) when full

struct CmdFdHeader {
  uint64_t magic;
  uint32_t context_id;
  uint32_t trap;  // 1: doorbell stores are trapped into the FIFO; 0: the device polls page 0
};

constexpr uint64_t kCmdFdMagic = 0x6d616e612d656d75ull;  // "mana-emu"

// Bytes of the memfd: doorbell page, header page, FIFO (page aligned).
size_t cmd_fd_bytes();

// A new sized memfd (O_CLOEXEC), or -1 with errno set.
int create_cmd_fd(unsigned vf, unsigned serial);

// True when `fd` is a context cmd_fd of the emulator (by its memfd name).
bool is_cmd_fd(int fd);

// The header and FIFO region of a cmd_fd, mapped read-write (pages 1..); nullptr on failure.
void* map_cmd_region(int fd);
void unmap_cmd_region(void* region);
CmdFdHeader* cmd_header(void* region);
void* cmd_fifo_memory(void* region);

}  // namespace mana::emu::verbs

namespace mana::emu::verbs {
// Page 0 of a cmd_fd: read-write (poll mode) or read-only (trap mode: every store faults).
volatile uint64_t* map_doorbell_page(int fd, bool writable);
void unmap_doorbell_page(volatile uint64_t* page);
}  // namespace mana::emu::verbs
