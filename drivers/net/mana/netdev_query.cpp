// SPDX-License-Identifier: BSD-3-Clause
#include "netdev_query.h"

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "mana/netlink_attrs.h"

namespace mana {
namespace {

constexpr size_t kReplyBytes = 32768;  // a link's attributes with statistics take ~1.5 KiB
constexpr time_t kReplyTimeoutS = 2;
// ETHTOOL_GLINKSETTINGS carries three link-mode bitmaps after the fixed part; the kernel tells the
// number of 32-bit words each takes (a handshake), which stays far below this.
constexpr int kMaxLinkModeWords = 32;

struct LinkRequest {
  nlmsghdr hdr;
  ifinfomsg info;
  char attrs[RTA_SPACE(IF_NAMESIZE) + RTA_SPACE(sizeof(uint32_t))];
};

void add_attr(LinkRequest* req, uint16_t type, const void* data, size_t len) {
  auto* rta =
      reinterpret_cast<rtattr*>(reinterpret_cast<char*>(req) + NLMSG_ALIGN(req->hdr.nlmsg_len));
  rta->rta_type = type;
  rta->rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
  std::memcpy(RTA_DATA(rta), data, len);
  req->hdr.nlmsg_len = NLMSG_ALIGN(req->hdr.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

// struct ethtool_link_settings and the three bitmaps that follow it (its flexible array).
struct alignas(ethtool_link_settings) LinkSettingsBuffer {
  unsigned char bytes[sizeof(ethtool_link_settings) + 3 * kMaxLinkModeWords * sizeof(uint32_t)];
};

// One ETHTOOL_GLINKSETTINGS ioctl asking with `nwords` words per bitmap: 0, or -errno.
int glinksettings(int fd, const char* ifname, int8_t nwords, LinkSettingsBuffer* buf,
                  ethtool_link_settings* out) {
  *buf = LinkSettingsBuffer{};
  ethtool_link_settings head{};
  head.cmd = ETHTOOL_GLINKSETTINGS;
  head.link_mode_masks_nwords = nwords;
  std::memcpy(buf->bytes, &head, sizeof(head));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(buf->bytes);
  const int rc = ioctl(fd, SIOCETHTOOL, &ifr) == 0 ? 0 : -errno;
  std::memcpy(out, buf->bytes, sizeof(*out));
  return rc;
}

}  // namespace

int parse_link_reply(const void* buf, size_t len, LinkAttrs* out) {
  const auto* h = static_cast<const nlmsghdr*>(buf);
  if (len < sizeof(nlmsghdr) || !NLMSG_OK(h, len)) return -EBADMSG;
  if (h->nlmsg_type == NLMSG_ERROR) {
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) return -EBADMSG;
    const int err = reinterpret_cast<const nlmsgerr*>(nl_payload(h))->error;
    return err < 0 ? err : -EBADMSG;  // 0 is an acknowledgement, not an answer
  }
  if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg)))
    return -EBADMSG;
  *out = LinkAttrs{};
  for_each_link_attr(h, [out](unsigned type, const uint8_t* data, size_t size) {
    if ((type == IFLA_CARRIER || type == IFLA_OPERSTATE) && size >= 1) {
      (type == IFLA_CARRIER ? out->carrier : out->operstate) = data[0];
      return;
    }
    if (size < sizeof(uint32_t)) return;
    uint32_t v = 0;
    std::memcpy(&v, data, sizeof(v));
    if (type == IFLA_MTU) out->mtu = v;
    if (type == IFLA_MAX_MTU) out->max_mtu = v;
  });
  return 0;
}

// RTM_GETLINK for one interface by name: the kernel answers RTM_NEWLINK or NLMSG_ERROR.
int query_link(const char* ifname, LinkAttrs* out) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return -errno;
  const timeval tv{kReplyTimeoutS, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  LinkRequest req{};
  req.hdr.nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg));
  req.hdr.nlmsg_type = RTM_GETLINK;
  req.hdr.nlmsg_flags = NLM_F_REQUEST;
  req.hdr.nlmsg_seq = 1;
  req.info.ifi_family = AF_UNSPEC;
  add_attr(&req, IFLA_IFNAME, ifname, strnlen(ifname, IF_NAMESIZE - 1) + 1);
  const uint32_t mask = RTEXT_FILTER_SKIP_STATS;
  add_attr(&req, IFLA_EXT_MASK, &mask, sizeof(mask));
  int rc = 0;
  if (send(fd, &req, req.hdr.nlmsg_len, 0) < 0) rc = -errno;
  std::vector<char> buf(kReplyBytes);
  ssize_t n = 0;
  if (rc == 0 && (n = recv(fd, buf.data(), buf.size(), 0)) < 0) rc = -errno;
  close(fd);
  return rc != 0 ? rc : parse_link_reply(buf.data(), static_cast<size_t>(n), out);
}

int64_t ethtool_speed_value(uint32_t speed) {
  if (speed == 0 || speed == static_cast<uint32_t>(SPEED_UNKNOWN)) return -1;
  return speed;
}

// The kernel's handshake (net/ethtool/ioctl.c ethtool_get_link_ksettings): a request with
// link_mode_masks_nwords 0 is answered with minus the number of words the kernel uses and nothing
// else; the second request with that number gets the settings.
int64_t ethtool_speed_mbps(const char* ifname) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  LinkSettingsBuffer buf;
  ethtool_link_settings answer{};
  int rc = glinksettings(fd, ifname, 0, &buf, &answer);
  const int words = -answer.link_mode_masks_nwords;
  if (rc == 0 && words > 0 && words <= kMaxLinkModeWords)
    rc = glinksettings(fd, ifname, static_cast<int8_t>(words), &buf, &answer);
  else if (rc == 0)
    rc = -EPROTO;
  close(fd);
  return rc == 0 ? ethtool_speed_value(answer.speed) : -1;
}

}  // namespace mana
