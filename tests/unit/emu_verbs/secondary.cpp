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
}

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
  char exe[] = "/proc/self/exe";
  char* child_argv[] = {exe, arg, nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe, nullptr, nullptr, child_argv, environ);
  close(fd);
  if (rc != 0) return -1;
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

}  // namespace mana::emu::test
