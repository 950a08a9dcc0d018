// SPDX-License-Identifier: BSD-3-Clause
// libc interposers that present the synthetic NICs as uio_hv_generic does (doc/emulator.md "The
// synthetic NIC", doc/hardware.md §11.1). DPDK's vmbus bus and net_netvsc read fixed paths; these
// rewrite them into the run folder R:
//   /sys/bus/vmbus/...                    -> R/sys/bus/vmbus/... (opendir, fopen, access, open)
//   /dev/uio<n> of a synthetic NIC        -> R/dev/uio<n> (open), remembered by fd
//   /sys/bus/pci/devices/<emulated bdf>/... -> R/sys/bus/pci/devices/... (net_netvsc's hot add)
// and mmap of a uio fd maps resource offset/4096 (uio's convention) from its file. ioctl
// SIOCGIFHWADDR and SIOCETHTOOL, and open/fopen of `speed`/`carrier` of a netdev that is down,
// answer for the emulated netdevs (netdev_attrs.h); the uevent socket is emulated
// (uevent_inject.h).
// Every other call goes straight to libc after a few byte compares.
// Our open/fopen must be defined as themselves, not redirected to their 64-bit names.
#undef _FILE_OFFSET_BITS
#include <dirent.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "preload/libc_next.h"
#include "preload/netdev_attrs.h"
#include "preload/uevent_inject.h"
#include "preload/uio_mmap.h"
#include "preload/vmbus_join.h"
#include "verbs/exports.h"
#include "verbs/runtime.h"

using namespace mana::emu;
using namespace mana::emu::preload;
using mana::emu::vmbus::VmbusRuntime;

namespace {

// fds of the emulated /dev/uio<n>: n + 1 (0: not one).
constexpr int kMaxTrackedFds = 4096;
std::atomic<uint16_t> g_uio_fd[kMaxTrackedFds];

// Emulated uevent sockets (the application's end) and the emulator's ends of them.
constexpr unsigned kMaxUeventSockets = 8;
std::atomic<int> g_uevent_fd[kMaxUeventSockets] = {-1, -1, -1, -1, -1, -1, -1, -1};
int g_uevent_peer[kMaxUeventSockets] = {-1, -1, -1, -1, -1, -1, -1, -1};
std::atomic<unsigned> g_uevent_count{0};
std::mutex g_uevent_lock;

bool has_prefix(const char* s, const char* prefix, size_t n) { return strncmp(s, prefix, n) == 0; }

// The run folder, when the emulator is active ("" otherwise).
bool run_folder(char* out, size_t cap) {
  const char* config = getenv("MANA_EMU_CONFIG");
  if (config == nullptr || *config == '\0') return false;
  const char* slash = strrchr(config, '/');
  const size_t n = slash == nullptr ? 1 : static_cast<size_t>(slash - config);
  if (n + 1 > cap) return false;
  if (slash == nullptr) {
    out[0] = '.';
  } else {
    memcpy(out, config, n);
  }
  out[n] = '\0';
  return true;
}

bool exists(const char* path) {
  static const auto libc_access = libc_next<int (*)(const char*, int)>("access");
  return libc_access(path, F_OK) == 0;
}

// Rewrites `path` into `out` when the emulator presents it; `uio` gets n for /dev/uio<n>.
bool redirect(const char* path, char* out, size_t cap, int* uio = nullptr) {
  if (path == nullptr || path[0] != '/') return false;
  const bool vmbus = has_prefix(path, "/sys/bus/vmbus", 14) && (path[14] == '/' || path[14] == 0);
  const bool pci = !vmbus && has_prefix(path, "/sys/bus/pci/devices/", 21);
  const bool dev_uio =
      !vmbus && !pci && has_prefix(path, "/dev/uio", 8) && path[8] >= '0' && path[8] <= '9';
  if (!vmbus && !pci && !dev_uio) return false;
  char root[PATH_MAX];
  if (!run_folder(root, sizeof(root))) return false;
  if (snprintf(out, cap, "%s%s", root, path) >= static_cast<int>(cap)) return false;
  if (vmbus) return true;  // no VMBus outside the emulator's (as on a machine without Hyper-V)
  if (!exists(out)) return false;  // a real PCI device or uio device
  if (dev_uio && uio != nullptr) *uio = atoi(path + 8);
  return true;
}

void track_uio(int fd, int index) {
  VmbusRuntime* rt = vmbus_runtime();
  if (fd < 0 || rt == nullptr || !rt->has_nic(static_cast<unsigned>(index))) return;
  if (fd >= kMaxTrackedFds) {
    static const char msg[] = "mana-emu: /dev/uio fd beyond 4096: its mmap is not emulated\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    return;
  }
  {
    std::lock_guard guard(verbs::Runtime::get()->lock());
    rt->uio_opened(static_cast<unsigned>(index));
  }
  g_uio_fd[fd].store(static_cast<uint16_t>(index + 1), std::memory_order_release);
}

int open_with(const char* name, const char* path, int flags, mode_t mode) {
  using OpenFn = int (*)(const char*, int, ...);
  static const auto libc_open = libc_next<OpenFn>("open");
  static const auto libc_open64 = libc_next<OpenFn>("open64");
  const OpenFn fn = name[4] == '6' ? libc_open64 : libc_open;
  // A read of a down netdev's speed/carrier (netdev_attrs.h); the emulator's own writes pass.
  if ((flags & O_ACCMODE) == O_RDONLY)
    if (const int fd = down_netdev_attr_fd(path); fd >= 0) return fd;
  char moved[PATH_MAX];
  int uio = -1;
  if (!redirect(path, moved, sizeof(moved), &uio)) return fn(path, flags, mode);
  const int fd = fn(moved, flags, mode);
  if (uio >= 0) track_uio(fd, uio);
  return fd;
}

// An fopen mode that only reads ("r", "re", "rb"; not "r+").
bool read_only(const char* mode) { return mode != nullptr && mode[0] == 'r' && !strchr(mode, '+'); }

mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

}  // namespace

namespace mana::emu::preload {

bool is_uio_fd(int fd, unsigned* index) {
  if (fd < 0 || fd >= kMaxTrackedFds) return false;
  const uint16_t v = g_uio_fd[fd].load(std::memory_order_acquire);
  if (v == 0) return false;
  *index = v - 1u;
  return true;
}

void inject_pci_add_uevent(const std::string& pci) {
  if (g_uevent_count.load(std::memory_order_acquire) == 0) return;
  char msg[512];
  // The kernel's format: "<action>@<devpath>\0KEY=value\0..." (lib/kobject_uevent.c).
  int n = snprintf(msg, sizeof(msg), "add@/devices/emulated/%s", pci.c_str()) + 1;
  for (const char* kv : {"ACTION=add", "SUBSYSTEM=pci"})
    n += snprintf(msg + n, sizeof(msg) - n, "%s", kv) + 1;
  n += snprintf(msg + n, sizeof(msg) - n, "PCI_SLOT_NAME=%s", pci.c_str()) + 1;
  std::lock_guard guard(g_uevent_lock);
  for (unsigned i = 0; i < kMaxUeventSockets; ++i)
    if (g_uevent_peer[i] >= 0) (void)!::send(g_uevent_peer[i], msg, static_cast<size_t>(n), 0);
}

}  // namespace mana::emu::preload

MANA_EMU_EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_with("open", path, flags, mode);
}

MANA_EMU_EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_with("open64", path, flags, mode);
}

MANA_EMU_EXPORT int close(int fd) {
  static const auto libc_close = libc_next<int (*)(int)>("close");
  if (fd >= 0 && fd < kMaxTrackedFds && g_uio_fd[fd].load(std::memory_order_relaxed) != 0) {
    const uint16_t v = g_uio_fd[fd].exchange(0, std::memory_order_acq_rel);
    if (v != 0) {
      std::lock_guard guard(verbs::Runtime::get()->lock());
      vmbus_runtime()->uio_closed(v - 1u);
    }
  }
  return libc_close(fd);
}

MANA_EMU_EXPORT FILE* fopen(const char* path, const char* mode) {
  static const auto libc_fopen = libc_next<FILE* (*)(const char*, const char*)>("fopen");
  if (read_only(mode))
    if (const int fd = down_netdev_attr_fd(path); fd >= 0) return fdopen(fd, mode);
  char moved[PATH_MAX];
  return libc_fopen(redirect(path, moved, sizeof(moved)) ? moved : path, mode);
}

MANA_EMU_EXPORT FILE* fopen64(const char* path, const char* mode) {
  static const auto libc_fopen64 = libc_next<FILE* (*)(const char*, const char*)>("fopen64");
  if (read_only(mode))
    if (const int fd = down_netdev_attr_fd(path); fd >= 0) return fdopen(fd, mode);
  char moved[PATH_MAX];
  return libc_fopen64(redirect(path, moved, sizeof(moved)) ? moved : path, mode);
}

MANA_EMU_EXPORT int access(const char* path, int mode) {
  static const auto libc_access = libc_next<int (*)(const char*, int)>("access");
  char moved[PATH_MAX];
  return libc_access(redirect(path, moved, sizeof(moved)) ? moved : path, mode);
}

MANA_EMU_EXPORT DIR* opendir(const char* path) {
  static const auto libc_opendir = libc_next<DIR* (*)(const char*)>("opendir");
  char moved[PATH_MAX];
  return libc_opendir(redirect(path, moved, sizeof(moved)) ? moved : path);
}

MANA_EMU_EXPORT int ioctl(int fd, unsigned long request, ...) {
  static const auto libc_ioctl = libc_next<int (*)(int, unsigned long, void*)>("ioctl");
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  // The emulated netdevs by their current names (R/sys/class/net follows renames; a name that is
  // gone, e.g. eth1 after udev renamed it, fails as the kernel's ioctl does: ENODEV from libc).
  if (request == SIOCGIFHWADDR && arg != nullptr) {
    auto* req = static_cast<ifreq*>(arg);
    std::string address;
    const std::string dir = emulated_netdev_dir(req->ifr_name);
    unsigned m[6];
    if (!dir.empty() && read_attr_raw(dir + "/address", &address) &&
        sscanf(address.c_str(), "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) ==
            6) {
      req->ifr_hwaddr.sa_family = ARPHRD_ETHER;
      for (int i = 0; i < 6; ++i) req->ifr_hwaddr.sa_data[i] = static_cast<char>(m[i]);
      return 0;
    }
  }
  if (request == SIOCETHTOOL && arg != nullptr) {
    int ret = 0;
    if (answer_ethtool(static_cast<ifreq*>(arg), &ret)) return ret;
  }
  return libc_ioctl(fd, request, arg);
}

MANA_EMU_EXPORT int socket(int domain, int type, int protocol) {
  static const auto libc_socket = libc_next<int (*)(int, int, int)>("socket");
  if (domain != AF_NETLINK || protocol != NETLINK_KOBJECT_UEVENT || vmbus_runtime() == nullptr)
    return libc_socket(domain, type, protocol);
  int pair[2];
  const int flags = type & (SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (socketpair(AF_UNIX, SOCK_DGRAM | flags, 0, pair) != 0) return -1;
  std::lock_guard guard(g_uevent_lock);
  for (unsigned i = 0; i < kMaxUeventSockets; ++i) {
    if (g_uevent_peer[i] >= 0) continue;
    g_uevent_peer[i] = pair[1];
    g_uevent_fd[i].store(pair[0], std::memory_order_release);
    g_uevent_count.fetch_add(1, std::memory_order_release);
    return pair[0];
  }
  ::close(pair[0]);
  ::close(pair[1]);
  errno = EMFILE;
  return -1;
}

MANA_EMU_EXPORT int bind(int fd, const sockaddr* addr, socklen_t len) {
  static const auto libc_bind = libc_next<int (*)(int, const sockaddr*, socklen_t)>("bind");
  if (g_uevent_count.load(std::memory_order_acquire) != 0) {
    for (auto& slot : g_uevent_fd)
      if (slot.load(std::memory_order_acquire) == fd) return 0;  // joined the (emulated) group
  }
  return libc_bind(fd, addr, len);
}
