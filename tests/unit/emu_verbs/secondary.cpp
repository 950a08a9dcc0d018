// SPDX-License-Identifier: BSD-3-Clause
#include "secondary.h"

#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>

#include "verbs_driver.h"

extern char** environ;

namespace mana::emu::test {

namespace {
constexpr char kOption[] = "--secondary-doorbell=";
constexpr char kOpenOption[] = "--secondary-open=";

// The child side of open_from_secondary.
int open_query_close(const std::string& pci) {
  ibv_device** list = ibv_get_device_list(nullptr);
  ibv_device* dev = find_device(list, pci, false);
  if (dev == nullptr) return 20;
  ibv_context* ctx = ibv_open_device(dev);
  if (ctx == nullptr) return 21;
  ibv_device_attr_ex attr{};
  if (ibv_query_device_ex(ctx, nullptr, &attr) != 0 || attr.orig_attr.vendor_id != 0x1414)
    return 22;
  errno = 0;
  if (ibv_alloc_pd(ctx) != nullptr || errno != EOPNOTSUPP) return 23;
  if (ibv_close_device(ctx) != 0) return 24;
  ibv_free_device_list(list);
  return 0;
}

// Runs this test binary again with `arg` and waits for it; its exit status, or -1.
int spawn_self_and_wait(char* arg, int timeout_ms) {
  char exe[] = "/proc/self/exe";
  char* child_argv[] = {exe, arg, nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, exe, nullptr, nullptr, child_argv, environ) != 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a child's exit, bounded
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

std::string mapping_perms(const void* addr) {
  std::istringstream maps(read_file("/proc/self/maps"));
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    char perms[8] = {};
    if (sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
        reinterpret_cast<uintptr_t>(addr) >= lo && reinterpret_cast<uintptr_t>(addr) < hi) {
      return perms;
    }
  }
  return "";
}

int run_secondary_if_asked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], kOpenOption, sizeof(kOpenOption) - 1) == 0)
      return open_query_close(argv[i] + sizeof(kOpenOption) - 1);
    if (strncmp(argv[i], kOption, sizeof(kOption) - 1) != 0) continue;
    int fd = -1, read_only = 0;
    uint32_t offset = 0;
    uint64_t value = 0;
    if (sscanf(argv[i] + sizeof(kOption) - 1, "%d,%" SCNu32 ",%" SCNx64 ",%d", &fd, &offset, &value,
               &read_only) != 4) {
      return 10;
    }
    void* page = mmap(nullptr, 4096, PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) return 11;
    if (mapping_perms(page) != (read_only ? "r--s" : "-w-s")) return 12;
    std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(static_cast<char*>(page) + offset))
        .store(value, std::memory_order_release);
    munmap(page, 4096);
    return 0;
  }
  return -1;
}

int ring_from_secondary(int cmd_fd, uint32_t offset, uint64_t value, bool expect_read_only,
                        int timeout_ms) {
  const int fd = dup(cmd_fd);  // without O_CLOEXEC: inherited by the child
  if (fd < 0) return -1;
  char arg[128];
  snprintf(arg, sizeof(arg), "%s%d,%" PRIu32 ",%" PRIx64 ",%d", kOption, fd, offset, value,
           expect_read_only ? 1 : 0);
  const int status = spawn_self_and_wait(arg, timeout_ms);
  close(fd);
  return status;
}

int open_from_secondary(const std::string& pci, int timeout_ms) {
  std::string arg = kOpenOption + pci;
  return spawn_self_and_wait(arg.data(), timeout_ms);
}

}  // namespace mana::emu::test
