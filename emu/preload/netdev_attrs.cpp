// SPDX-License-Identifier: BSD-3-Clause
#include "preload/netdev_attrs.h"

#include <fcntl.h>
#include <linux/ethtool.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "preload/libc_next.h"

namespace mana::emu::preload {

namespace {

using OpenFn = int (*)(const char*, int, ...);

bool ends_with(const char* s, size_t n, const char* suffix) {
  const size_t k = strlen(suffix);
  return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

// The run folder (the folder of MANA_EMU_CONFIG), or "".
std::string run_folder() {
  const char* config = getenv("MANA_EMU_CONFIG");
  if (config == nullptr || *config == '\0') return {};
  const char* slash = strrchr(config, '/');
  return slash == nullptr ? std::string(".") : std::string(config, slash);
}

int64_t number(const std::string& text) {
  char* end = nullptr;
  const long long v = strtoll(text.c_str(), &end, 0);
  return end == text.c_str() ? INT64_MIN : v;
}

// A link-mode word count the kernel would answer with (net/ethtool: __ETHTOOL_LINK_MODE_MASK_NU32).
constexpr int8_t kLinkModeWords = 4;

}  // namespace

bool read_attr_raw(const std::string& path, std::string* out) {
  static const auto libc_open = libc_next<OpenFn>("open");
  const int fd = libc_open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  if (n < 0) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

bool netdev_dir_up(const std::string& dir) {
  std::string flags;
  if (!read_attr_raw(dir + "/flags", &flags)) return false;
  const int64_t v = number(flags);
  return v != INT64_MIN && (v & IFF_UP) != 0;
}

int down_netdev_attr_fd(const char* path) {
  if (path == nullptr) return -1;
  const size_t n = strlen(path);
  if (!ends_with(path, n, "/speed") && !ends_with(path, n, "/carrier")) return -1;
  const std::string root = run_folder();
  if (root.empty() || strncmp(path, root.c_str(), root.size()) != 0) return -1;
  const std::string dir(path, strrchr(path, '/'));
  std::string flags;
  if (!read_attr_raw(dir + "/flags", &flags) || netdev_dir_up(dir)) return -1;
  return epoll_create1(EPOLL_CLOEXEC);
}

std::string emulated_netdev_dir(const char* ifname) {
  const std::string root = run_folder();
  if (root.empty() || ifname[0] == '\0' || ifname[0] == '.' || strchr(ifname, '/') != nullptr)
    return {};
  const std::string dir = root + "/sys/class/net/" + std::string(ifname, strnlen(ifname, IFNAMSIZ));
  // VF netdevs only (they have a dev_port): a synthetic interface may share its name with one of
  // the host's (eth0), which the kernel answers for.
  std::string port;
  return read_attr_raw(dir + "/dev_port", &port) ? dir : std::string();
}

bool answer_ethtool(ifreq* req, int* ret) {
  const std::string dir = emulated_netdev_dir(req->ifr_name);
  if (dir.empty() || req->ifr_data == nullptr) return false;
  uint32_t cmd = 0;
  memcpy(&cmd, req->ifr_data, sizeof(cmd));
  std::string text;
  const int64_t speed = read_attr_raw(dir + "/speed", &text) ? number(text) : -1;
  const uint32_t kernel_speed = speed > 0 ? static_cast<uint32_t>(speed) : SPEED_UNKNOWN;
  *ret = 0;
  if (cmd == ETHTOOL_GLINKSETTINGS) {
    auto* s = reinterpret_cast<ethtool_link_settings*>(req->ifr_data);
    if (s->link_mode_masks_nwords != kLinkModeWords) {
      // The handshake's first step: the word count, nothing else.
      ethtool_link_settings answer{};
      answer.cmd = ETHTOOL_GLINKSETTINGS;
      answer.link_mode_masks_nwords = static_cast<int8_t>(-kLinkModeWords);
      memcpy(s, &answer, sizeof(answer));
      return true;
    }
    memset(s, 0, sizeof(*s) + 3u * kLinkModeWords * sizeof(uint32_t));
    s->cmd = ETHTOOL_GLINKSETTINGS;
    s->link_mode_masks_nwords = kLinkModeWords;
    s->speed = kernel_speed;
    s->duplex = DUPLEX_FULL;
    s->port = PORT_OTHER;
    return true;
  }
  if (cmd == ETHTOOL_GSET) {
    auto* c = reinterpret_cast<ethtool_cmd*>(req->ifr_data);
    memset(c, 0, sizeof(*c));
    c->cmd = ETHTOOL_GSET;
    ethtool_cmd_speed_set(c, kernel_speed);
    c->duplex = DUPLEX_FULL;
    c->port = PORT_OTHER;
    return true;
  }
  if (cmd == ETHTOOL_GLINK) {
    // net/ethtool/ioctl.c: netif_running(dev) && get_link(dev).
    auto* v = reinterpret_cast<ethtool_value*>(req->ifr_data);
    std::string carrier;
    v->data =
        netdev_dir_up(dir) && read_attr_raw(dir + "/carrier", &carrier) && number(carrier) == 1;
    return true;
  }
  return false;
}

}  // namespace mana::emu::preload
