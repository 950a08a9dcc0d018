// SPDX-License-Identifier: BSD-3-Clause
// rtnetlink for the emulated netdevs: the kernel does not know them, so an RTM_GETLINK request that
// names one of them (IFLA_IFNAME, on a NETLINK_ROUTE socket) is answered here with the attributes a
// driver reads for its MTU (IFLA_MTU from the netdev's sysfs file, IFLA_MAX_MTU = hw adapter-mtu)
// and its link (IFLA_CARRIER, IFLA_OPERSTATE: doc/hardware.md §9.24).
// Every other send and recv goes to libc unchanged (doc/emulator.md "MTU").
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if_arp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "config/fs_util.h"
#include "config/sysfs_tree.h"
#include "mana/netlink_attrs.h"
#include "preload/libc_next.h"
#include "preload/netdev_attrs.h"
#include "verbs/exports.h"
#include "verbs/runtime.h"

using namespace mana::emu;
using namespace mana::emu::verbs;
using mana::emu::preload::libc_next;
using mana::emu::preload::netdev_dir_up;
using mana::emu::preload::read_attr_raw;

namespace {

constexpr uint32_t kMinMtu = 68;
// IF_OPER_DOWN and IF_OPER_UP (RFC 2863 operstates as linux/if.h numbers them; that header
// clashes with net/if.h).
constexpr uint8_t kOperDown = 2;
constexpr uint8_t kOperUp = 6;
constexpr size_t kReplyMax = 256;
constexpr unsigned kSlots = 8;

// Answers waiting for the recv of their socket.
struct PendingReply {
  int fd = -1;
  size_t len = 0;
  alignas(4) unsigned char data[kReplyMax];
};
std::mutex g_lock;
PendingReply g_pending[kSlots];
std::atomic<unsigned> g_pending_count{0};

bool route_socket(int fd) {
  int domain = 0, protocol = 0;
  socklen_t len = sizeof(int);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_NETLINK)
    return false;
  len = sizeof(int);
  return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) == 0 && protocol == NETLINK_ROUTE;
}

// The name an RTM_GETLINK request (not a dump) asks for, or "".
std::string requested_name(const void* buf, size_t len) {
  const auto* h = static_cast<const nlmsghdr*>(buf);
  if (len < NLMSG_LENGTH(sizeof(ifinfomsg)) || h->nlmsg_len > len || h->nlmsg_type != RTM_GETLINK ||
      (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP)
    return {};
  std::string name;
  mana::for_each_link_attr(h, [&name](unsigned type, const uint8_t* data, size_t n) {
    const auto* text = reinterpret_cast<const char*>(data);
    if (type == IFLA_IFNAME && name.empty()) name.assign(text, strnlen(text, n));
  });
  return name;
}

void put_attr(PendingReply* r, uint16_t type, const void* data, size_t len) {
  auto* a = reinterpret_cast<rtattr*>(r->data + NLMSG_ALIGN(r->len));
  a->rta_type = type;
  a->rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
  std::memcpy(RTA_DATA(a), data, len);
  r->len = NLMSG_ALIGN(r->len) + RTA_ALIGN(a->rta_len);
}

uint32_t read_mtu(const std::string& path, uint32_t fallback) {
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return fallback;
  unsigned v = 0;
  if (std::fscanf(f, "%u", &v) != 1) v = fallback;
  std::fclose(f);
  return v;
}

// Whether `name` is the port's netdev after a rename: the folder `name` has the port's dev_port.
bool renamed_to(const EmuConfig& config, uint32_t vf, const PortConfig& port,
                const std::string& name) {
  const auto& ports = config.vfs[vf].ports;
  const size_t index = static_cast<size_t>(&port - ports.data());
  std::string text;
  return read_file(pci_device_dir(config, vf) + "/net/" + name + "/dev_port", &text) &&
         text == std::to_string(index) + "\n";
}

// RTM_NEWLINK for an emulated netdev, or false when `name` is not one.
bool build_reply(const std::string& name, const nlmsghdr& req, PendingReply* r) {
  Runtime* rt = name.empty() ? nullptr : Runtime::get();
  if (rt == nullptr) return false;
  const EmuConfig& config = rt->config();
  int index = 0;
  for (uint32_t vf = 0; vf < config.vfs.size(); ++vf) {
    for (const PortConfig& port : config.vfs[vf].ports) {
      ++index;
      // By the netdev's folder, not the configured name: `mana-emu ctl rename` renames it.
      if (name.find('/') != std::string::npos ||
          !path_exists(pci_device_dir(config, vf) + "/net/" + name + "/dev_port") ||
          (port.ifname != name && !renamed_to(config, vf, port, name)))
        continue;
      const uint32_t mtu =
          read_mtu(pci_device_dir(config, vf) + "/net/" + name + "/mtu", config.vfs[vf].limits.mtu);
      std::memset(r->data, 0, sizeof(r->data));
      auto* h = reinterpret_cast<nlmsghdr*>(r->data);
      h->nlmsg_type = RTM_NEWLINK;
      h->nlmsg_seq = req.nlmsg_seq;
      auto* info = static_cast<ifinfomsg*>(NLMSG_DATA(h));
      info->ifi_family = AF_UNSPEC;
      info->ifi_type = ARPHRD_ETHER;
      info->ifi_index = 0x7ffff000 + index;  // no kernel interface has it
      r->len = NLMSG_LENGTH(sizeof(ifinfomsg));
      put_attr(r, IFLA_IFNAME, name.c_str(), name.size() + 1);
      put_attr(r, IFLA_MTU, &mtu, sizeof(mtu));
      put_attr(r, IFLA_MIN_MTU, &kMinMtu, sizeof(kMinMtu));
      put_attr(r, IFLA_MAX_MTU, &config.hw.adapter_mtu, sizeof(uint32_t));
      // The carrier flag whether the netdev runs or not; the operstate IF_OPER_DOWN while it is
      // down (rtnl_fill_ifinfo: netif_running ? operstate : IF_OPER_DOWN). Read with libc: the
      // library's own open answers EINVAL for a down netdev's `carrier`.
      const std::string dir = pci_device_dir(config, vf) + "/net/" + name;
      std::string text;
      const uint8_t carrier = read_attr_raw(dir + "/carrier", &text) && text[0] == '1' ? 1 : 0;
      const uint8_t operstate = netdev_dir_up(dir) && carrier ? kOperUp : kOperDown;
      put_attr(r, IFLA_CARRIER, &carrier, sizeof(carrier));
      put_attr(r, IFLA_OPERSTATE, &operstate, sizeof(operstate));
      h->nlmsg_len = static_cast<uint32_t>(r->len);
      return true;
    }
  }
  return false;
}

}  // namespace

MANA_EMU_EXPORT ssize_t send(int fd, const void* buf, size_t len, int flags) {
  static const auto libc_send = libc_next<ssize_t (*)(int, const void*, size_t, int)>("send");
  const std::string name = getenv("MANA_EMU_CONFIG") ? requested_name(buf, len) : std::string();
  PendingReply reply;
  if (!name.empty() && route_socket(fd) &&
      build_reply(name, *static_cast<const nlmsghdr*>(buf), &reply)) {
    std::lock_guard g(g_lock);
    for (PendingReply& slot : g_pending) {
      if (slot.fd != -1 && slot.fd != fd) continue;
      if (slot.fd == -1) g_pending_count.fetch_add(1);
      reply.fd = fd;
      slot = reply;
      return static_cast<ssize_t>(len);
    }
  }
  return libc_send(fd, buf, len, flags);
}

MANA_EMU_EXPORT ssize_t recv(int fd, void* buf, size_t len, int flags) {
  static const auto libc_recv = libc_next<ssize_t (*)(int, void*, size_t, int)>("recv");
  if (g_pending_count.load(std::memory_order_acquire) != 0) {
    std::lock_guard g(g_lock);
    for (PendingReply& slot : g_pending) {
      if (slot.fd != fd) continue;
      const size_t n = std::min(len, slot.len);
      std::memcpy(buf, slot.data, n);
      const ssize_t ret = static_cast<ssize_t>((flags & MSG_TRUNC) ? slot.len : n);
      if ((flags & MSG_PEEK) == 0) {
        slot.fd = -1;
        g_pending_count.fetch_sub(1);
      }
      return ret;
    }
  }
  return libc_recv(fd, buf, len, flags);
}
