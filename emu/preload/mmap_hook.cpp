// SPDX-License-Identifier: BSD-3-Clause
// mmap interposition: a process that maps an emulator cmd_fd at offset 0 (a DPDK secondary does,
// with the fd it got from the primary) gets the context's doorbell page; in trap mode read-only
// and registered with the trap, its stores going to the context's FIFO in the same memfd.
// Our mmap must be defined as `mmap`, not redirected to mmap64 by the large-file headers.
#undef _FILE_OFFSET_BITS
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "doorbell/trap.h"
#include "preload/uio_mmap.h"
#include "preload/vmbus_join.h"
#include "verbs/cmd_fd.h"
#include "verbs/exports.h"

using namespace mana::emu::verbs;

namespace {

void* raw_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}

// Pages this hook trapped and the FIFO region mapped for each (fixed table: no allocation).
struct TrappedMapping {
  std::atomic<void*> page{nullptr};
  void* region = nullptr;
};
constexpr unsigned kMaxTrappedMappings = 256;
TrappedMapping g_trapped[kMaxTrappedMappings];

// Read on every call (not cached): a process may set MANA_EMU_CONFIG after its first mmap.
bool emulation_active() {
  const char* config = getenv("MANA_EMU_CONFIG");
  return config != nullptr && *config != '\0';
}

void* map_trapped_doorbell_page(void* addr, size_t len, int flags, int fd) {
  void* region = map_cmd_region(fd);
  if (region == nullptr) return MAP_FAILED;
  const CmdFdHeader* header = cmd_header(region);
  if (header->magic != kCmdFdMagic || header->trap == 0) {
    unmap_cmd_region(region);
    return nullptr;  // not trapped: an ordinary mapping
  }
  auto* fifo = mana::emu::doorbell::DoorbellFifo::attach(cmd_fifo_memory(region));
  void* page = raw_mmap(addr, len, PROT_READ, flags, fd, 0);
  if (page == MAP_FAILED || fifo == nullptr) {
    unmap_cmd_region(region);
    return MAP_FAILED;
  }
  for (auto& slot : g_trapped) {
    void* expected = nullptr;
    if (slot.page.compare_exchange_strong(expected, page)) {
      slot.region = region;
      if (mana::emu::doorbell::trap_register(page, header->context_id, fifo) == 0) return page;
      slot.region = nullptr;
      slot.page.store(nullptr);
      break;
    }
  }
  syscall(SYS_munmap, page, len);
  unmap_cmd_region(region);
  errno = ENOMEM;
  return MAP_FAILED;
}

}  // namespace

MANA_EMU_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  // uio's resource index is the offset in pages (uio_hooks.cpp).
  if (unsigned uio = 0; mana::emu::preload::is_uio_fd(fd, &uio))
    return mana::emu::preload::vmbus_runtime()->map(uio, addr, len, prot, flags, off);
  if (fd >= 0 && off == 0 && (prot & PROT_WRITE) && (flags & MAP_SHARED) && emulation_active() &&
      is_cmd_fd(fd)) {
    void* page = map_trapped_doorbell_page(addr, len, flags, fd);
    if (page != nullptr) return page;
  }
  return raw_mmap(addr, len, prot, flags, fd, off);
}

MANA_EMU_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

MANA_EMU_EXPORT int munmap(void* addr, size_t len) {
  for (auto& slot : g_trapped) {
    if (addr != nullptr && slot.page.load(std::memory_order_acquire) == addr) {
      mana::emu::doorbell::trap_unregister(addr);
      unmap_cmd_region(slot.region);
      slot.region = nullptr;
      slot.page.store(nullptr, std::memory_order_release);
    }
  }
  return static_cast<int>(syscall(SYS_munmap, addr, len));
}
