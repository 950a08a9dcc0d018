// SPDX-License-Identifier: BSD-3-Clause
#include "verbs/cmd_fd.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace mana::emu::verbs {

namespace {
constexpr char kMemfdPrefix[] = "mana-emu-ctx-";
size_t region_bytes() { return cmd_fd_bytes() - kCmdHeaderOffset; }
}  // namespace

size_t cmd_fd_bytes() {
  const size_t fifo = doorbell::DoorbellFifo::bytes(kCmdFifoCapacity);
  return kCmdFifoOffset + ((fifo + kDoorbellPageBytes - 1) & ~(kDoorbellPageBytes - 1));
}

int create_cmd_fd(unsigned vf, unsigned serial) {
  char name[64];
  snprintf(name, sizeof(name), "%s%u-%u", kMemfdPrefix, vf, serial);
  int fd = static_cast<int>(syscall(SYS_memfd_create, name, MFD_CLOEXEC));
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(cmd_fd_bytes())) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool is_cmd_fd(int fd) {
  char link[64];
  char target[128];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  static constexpr char kTag[] = "/memfd:";
  return strncmp(target, kTag, sizeof(kTag) - 1) == 0 &&
         strncmp(target + sizeof(kTag) - 1, kMemfdPrefix, sizeof(kMemfdPrefix) - 1) == 0;
}

void* map_cmd_region(int fd) {
  // The raw syscall: our interposed mmap must not see our own mappings.
  void* p =
      reinterpret_cast<void*>(syscall(SYS_mmap, nullptr, region_bytes(), PROT_READ | PROT_WRITE,
                                      MAP_SHARED, fd, static_cast<off_t>(kCmdHeaderOffset)));
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_cmd_region(void* region) {
  if (region != nullptr) syscall(SYS_munmap, region, region_bytes());
}

CmdFdHeader* cmd_header(void* region) { return static_cast<CmdFdHeader*>(region); }

void* cmd_fifo_memory(void* region) {
  return static_cast<char*>(region) + (kCmdFifoOffset - kCmdHeaderOffset);
}

}  // namespace mana::emu::verbs

namespace mana::emu::verbs {

volatile uint64_t* map_doorbell_page(int fd, bool writable) {
  const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void* p = reinterpret_cast<void*>(
      syscall(SYS_mmap, nullptr, kDoorbellPageBytes, prot, MAP_SHARED, fd, 0));
  return p == MAP_FAILED ? nullptr : static_cast<volatile uint64_t*>(p);
}

void unmap_doorbell_page(volatile uint64_t* page) {
  if (page != nullptr) syscall(SYS_munmap, const_cast<uint64_t*>(page), kDoorbellPageBytes);
}

}  // namespace mana::emu::verbs
