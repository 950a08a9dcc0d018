// SPDX-License-Identifier: BSD-3-Clause
#include "netdev_mtu.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "mana_log.h"
#include "priv.h"

namespace mana {

void netdev_mtu_attach(PortPriv& priv, const char* ibdev_path) {
  snprintf(priv.mtu_path, sizeof(priv.mtu_path), "%s/device/net/%s/mtu", ibdev_path, priv.ifname);
  LinkAttrs link;
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
