// SPDX-License-Identifier: BSD-3-Clause
#include "ib_sysfs.h"

#include <dirent.h>
#include <limits.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <rte_string_fns.h>

namespace mana {
namespace {

// Reads the first line of a small file without its newline. True on success.
bool read_line(const char* path, char* buf, size_t len) {
  FILE* f = fopen(path, "r");
  if (f == nullptr) return false;
  const bool ok = fgets(buf, static_cast<int>(len), f) != nullptr;
  fclose(f);
  if (ok) buf[strcspn(buf, "\r\n")] = '\0';
  return ok;
}

bool read_netdev(const char* net_dir, const char* ifname, unsigned* dev_port, rte_ether_addr* mac) {
  char path[PATH_MAX];
  char line[64];
  snprintf(path, sizeof(path), "%s/%s/dev_port", net_dir, ifname);
  if (!read_line(path, line, sizeof(line))) return false;
  char* end;
  const unsigned long port = strtoul(line, &end, 10);
  if (end == line) return false;
  snprintf(path, sizeof(path), "%s/%s/address", net_dir, ifname);
  if (!read_line(path, line, sizeof(line)) || rte_ether_unformat_addr(line, mac) != 0) return false;
  *dev_port = static_cast<unsigned>(port);
  return true;
}

// Calls fn(ifname, dev_port, mac) for every readable netdev of the function.
template <class Fn>
void for_each_netdev(const char* ibdev_path, Fn fn) {
  char net_dir[PATH_MAX];
  snprintf(net_dir, sizeof(net_dir), "%s/device/net", ibdev_path);
  DIR* dir = opendir(net_dir);
  if (dir == nullptr) return;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    unsigned dev_port;
    rte_ether_addr mac;
    if (read_netdev(net_dir, e->d_name, &dev_port, &mac) && fn(e->d_name, dev_port, mac)) break;
  }
  closedir(dir);
}

}  // namespace

int ib_device_pci_addr(const char* ibdev_path, rte_pci_addr* out) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/device/uevent", ibdev_path);
  FILE* f = fopen(path, "r");
  if (f == nullptr) return -ENOENT;
  static constexpr char kKey[] = "PCI_SLOT_NAME=";
  char line[256];
  int rc = -ENOENT;
  while (fgets(line, sizeof(line), f) != nullptr) {
    if (strncmp(line, kKey, sizeof(kKey) - 1) != 0) continue;
    line[strcspn(line, "\r\n")] = '\0';
    rc = rte_pci_addr_parse(line + sizeof(kKey) - 1, out) == 0 ? 0 : -EINVAL;
    break;
  }
  fclose(f);
  return rc;
}

int ib_port_netdev(const char* ibdev_path, unsigned ib_port, PortNetdev* out) {
  int rc = -ENOENT;
  for_each_netdev(ibdev_path,
                  [&](const char* ifname, unsigned dev_port, const rte_ether_addr& mac) {
                    if (dev_port + 1 != ib_port) return false;
                    if (rte_strscpy(out->ifname, ifname, sizeof(out->ifname)) < 0) return false;
                    out->mac = mac;
                    rc = 0;
                    return true;
                  });
  return rc;
}

int ib_port_by_mac(const char* ibdev_path, const rte_ether_addr& mac, unsigned* ib_port,
                   PortNetdev* out) {
  int rc = -ENOENT;
  for_each_netdev(ibdev_path, [&](const char* ifname, unsigned dev_port, const rte_ether_addr& m) {
    if (!rte_is_same_ether_addr(&m, &mac)) return false;
    if (rte_strscpy(out->ifname, ifname, sizeof(out->ifname)) < 0) return false;
    out->mac = m;
    *ib_port = dev_port + 1;
    rc = 0;
    return true;
  });
  return rc;
}

void list_port_macs(const char* ibdev_path, char* buf, size_t len) {
  size_t used = 0;
  if (len) buf[0] = '\0';
  for_each_netdev(ibdev_path, [&](const char* ifname, unsigned, const rte_ether_addr& mac) {
    char m[RTE_ETHER_ADDR_FMT_SIZE];
    rte_ether_format_addr(m, sizeof(m), &mac);
    const int n = snprintf(buf + used, len - used, "%s%s %s", used ? ", " : "", ifname, m);
    if (n < 0 || static_cast<size_t>(n) >= len - used) return true;
    used += static_cast<size_t>(n);
    return false;
  });
}

}  // namespace mana
