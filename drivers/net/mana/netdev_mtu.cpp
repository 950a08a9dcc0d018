// SPDX-License-Identifier: BSD-3-Clause
#include "netdev_mtu.h"

#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mana/netlink_attrs.h"
#include "mana_log.h"
#include "priv.h"

namespace mana {
namespace {

constexpr size_t kReplyBytes = 32768;  // a link's attributes with statistics take ~1.5 KiB
constexpr time_t kReplyTimeoutS = 2;

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

// RTM_GETLINK for one interface by name: the kernel answers RTM_NEWLINK or NLMSG_ERROR.
int query_link(const char* ifname, LinkMtu* out) {
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

}  // namespace

int parse_link_reply(const void* buf, size_t len, LinkMtu* out) {
  const auto* h = static_cast<const nlmsghdr*>(buf);
  if (len < sizeof(nlmsghdr) || !NLMSG_OK(h, len)) return -EBADMSG;
  if (h->nlmsg_type == NLMSG_ERROR) {
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) return -EBADMSG;
    const int err = reinterpret_cast<const nlmsgerr*>(nl_payload(h))->error;
    return err < 0 ? err : -EBADMSG;  // 0 is an acknowledgement, not an answer
  }
  if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg)))
    return -EBADMSG;
  *out = LinkMtu{};
  for_each_link_attr(h, [out](unsigned type, const uint8_t* data, size_t size) {
    if (size < sizeof(uint32_t)) return;
    uint32_t v = 0;
    std::memcpy(&v, data, sizeof(v));
    if (type == IFLA_MTU) out->mtu = v;
    if (type == IFLA_MAX_MTU) out->max_mtu = v;
  });
  return 0;
}

void netdev_mtu_attach(PortPriv& priv, const char* ibdev_path) {
  snprintf(priv.mtu_path, sizeof(priv.mtu_path), "%s/device/net/%s/mtu", ibdev_path, priv.ifname);
  LinkMtu link;
  const int rc = query_link(priv.ifname, &link);
  if (rc == 0 && link.max_mtu != 0) {
    priv.max_mtu = link.max_mtu;
    return;
  }
  priv.max_mtu = kFallbackMaxMtu;
  MANA_INIT_LOG(INFO, "%s: cannot read the max MTU of netdev %s (%s): MTU up to %u", priv.name,
                priv.ifname, rc != 0 ? strerror(-rc) : "no IFLA_MAX_MTU", kFallbackMaxMtu);
}

uint32_t netdev_mtu_read(const PortPriv& priv) {
  FILE* f = std::fopen(priv.mtu_path, "re");
  if (f == nullptr) return 0;
  unsigned v = 0;
  if (std::fscanf(f, "%u", &v) != 1) v = 0;
  std::fclose(f);
  return v;
}

int netdev_mtu_write(const PortPriv& priv, uint32_t mtu) {
  const int fd = open(priv.mtu_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return -errno;
  char line[16];
  const int len = snprintf(line, sizeof(line), "%u\n", mtu);
  const ssize_t n = write(fd, line, static_cast<size_t>(len));
  const int rc = n == len ? 0 : (n < 0 ? -errno : -EIO);
  close(fd);
  return rc;
}

}  // namespace mana
