// SPDX-License-Identifier: BSD-3-Clause
#include "link_state.h"

#include <limits.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <ethdev_driver.h>
#include <rte_alarm.h>

#include "hw_counters.h"
#include "ib_sysfs.h"
#include "mana_log.h"
#include "netdev_mtu.h"
#include "netdev_query.h"
#include "priv.h"
#include "recovery_state.h"

namespace mana {
namespace {

// The first line of a small sysfs file into `buf`; false when it cannot be read (a netdev that is
// down answers EINVAL for speed and carrier).
bool read_first_line(const char* path, char* buf, size_t len) {
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return false;
  const bool ok = std::fgets(buf, static_cast<int>(len), f) != nullptr;
  std::fclose(f);
  return ok;
}

// A netdev of the function renamed after probe (udev, or a rename while the VF was away): the
// port's messages and its MTU and counter files follow the new name. Primary only: the paths live
// in the shared port data.
void follow_rename(PortPriv& priv, const char* ifname) {
  if (std::strcmp(priv.ifname, ifname) == 0 || rte_eal_process_type() != RTE_PROC_PRIMARY) return;
  MANA_DRV_LOG(NOTICE, "port %u: its netdev %s is now called %s", priv.port_id, priv.ifname,
               ifname);
  snprintf(priv.ifname, sizeof(priv.ifname), "%s", ifname);
  hw_counters_attach(priv, priv.ibdev_path);
  netdev_mtu_attach(priv, priv.ibdev_path);
}

void look(void* arg);

void schedule(uint16_t port_id) {
  if (int rc = rte_eal_alarm_set(kLinkWatchMs * 1000ull, look, port_callback_arg(port_id)); rc != 0)
    MANA_DRV_LOG(ERR, "port %u: cannot arm the link watch: %s: no link state change events",
                 port_id, strerror(-rc));
}

// The link as a word, for the watch's comparison: status and speed.
uint64_t link_word(const rte_eth_link& l) { return (uint64_t{l.link_speed} << 1) | l.link_status; }

uint64_t current_link_word(rte_eth_dev* dev) {
  link_update(dev, 0);
  rte_eth_link now{};
  rte_eth_linkstatus_get(dev, &now);
  return link_word(now);
}

// The alarm, on the EAL interrupt thread: an event when the link differs from the one the watch
// last saw (its own record: an application polling rte_eth_link_get in between must not make it
// miss a change).
void look(void* arg) {
  const uint16_t port_id = port_of_callback_arg(arg);
  rte_eth_dev* dev = &rte_eth_devices[port_id];
  PortPriv& priv = *priv_of(dev);
  const uint64_t now = current_link_word(dev);
  const bool changed = now != priv.link_watch_seen;
  priv.link_watch_seen = now;
  schedule(port_id);  // first: the application's callback may stop the port, which cancels it
  if (changed) rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, nullptr);
}

}  // namespace

int64_t parse_netdev_speed(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || errno != 0 || v <= 0) return -1;
  return v;
}

int parse_netdev_carrier(const char* text) {
  if (text[0] == '1' && (text[1] == '\0' || text[1] == '\n')) return 1;
  if (text[0] == '0' && (text[1] == '\0' || text[1] == '\n')) return 0;
  return -1;
}

int down_netdev_carrier(int reported, bool* seen_on) {
  if (reported == 1) *seen_on = true;
  if (reported == 1 || (reported == 0 && *seen_on)) return reported;
  return -1;
}

NetdevLink netdev_link_read(PortPriv& priv) {
  NetdevLink link;
  PortNetdev nd{};
  if (priv.ibdev_path[0] == '\0' || ib_port_netdev(priv.ibdev_path, priv.ib_port, &nd) != 0)
    return link;
  follow_rename(priv, nd.ifname);
  char path[PATH_MAX];
  char line[32];
  // sysfs answers while the netdev runs; then its carrier is the whole truth.
  snprintf(path, sizeof(path), "%s/device/net/%s/carrier", priv.ibdev_path, nd.ifname);
  if (read_first_line(path, line, sizeof(line))) link.carrier = parse_netdev_carrier(line);
  const bool running = link.carrier >= 0;
  link.speed_mbps = ethtool_speed_mbps(nd.ifname);
  snprintf(path, sizeof(path), "%s/device/net/%s/speed", priv.ibdev_path, nd.ifname);
  if (link.speed_mbps < 0 && read_first_line(path, line, sizeof(line)))
    link.speed_mbps = parse_netdev_speed(line);
  if (running) return link;
  LinkAttrs attrs;
  const int rc = query_link(nd.ifname, &attrs);
  if (rc == 0) link.carrier = down_netdev_carrier(attrs.carrier, &priv.carrier_seen_on);
  if (!priv.link_sources_told && rte_eal_process_type() == RTE_PROC_PRIMARY) {
    priv.link_sources_told = true;
    char speed[64];
    if (link.speed_mbps > 0)
      snprintf(speed, sizeof(speed), "%lld Mbit/s", static_cast<long long>(link.speed_mbps));
    else
      snprintf(speed, sizeof(speed), "none (Linux before 6.17?): 100 Gbps reported");
    MANA_DRV_LOG(
        NOTICE,
        "port %u: netdev %s is down (as a DPDK port's must be), so sysfs gives no speed or "
        "carrier: speed from ethtool: %s; link status from its carrier over rtnetlink: %s",
        priv.port_id, nd.ifname, speed,
        rc != 0              ? "unavailable, link reported up"
        : attrs.carrier == 1 ? "on, followed from now"
        : attrs.carrier == 0 ? "off, taken as no news until it has been on (kernels "
                               "before 6.19 turn it off with the netdev)"
                             : "not reported, link reported up");
  }
  return link;
}

void link_watch_start(rte_eth_dev* dev) {
  if (dev->data->dev_conf.intr_conf.lsc == 0 || rte_eal_process_type() != RTE_PROC_PRIMARY) return;
  priv_of(dev)->link_watch_seen = current_link_word(dev);
  schedule(dev->data->port_id);
}

void link_watch_stop(rte_eth_dev* dev) {
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return;
  rte_eal_alarm_cancel(look, port_callback_arg(dev->data->port_id));
}

// The link as the kernel shows it (doc/hardware.md §9.24): down while the VF is removed or its
// netdev's carrier is off (netdev_link_read), or while the port is stopped (no queues, nothing
// passes: as virtio, tap and most PMDs report it; DTS's port_control checks it); the speed the
// netdev reports (since Linux 6.17 the VM's bandwidth), 100G where it says none (older kernels),
// none while the link is down. Control path: a few sysfs reads, an ioctl and a netlink question.
int link_update(rte_eth_dev* dev, int /*wait_to_complete*/) {
  PortPriv& priv = *priv_of(dev);
  const NetdevLink nd = netdev_link_read(priv);
  rte_eth_link link{};
  link.link_speed = nd.speed_mbps > 0 && nd.speed_mbps <= UINT32_MAX
                        ? static_cast<uint32_t>(nd.speed_mbps)
                        : RTE_ETH_SPEED_NUM_100G;
  link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
  link.link_autoneg = RTE_ETH_LINK_FIXED;
  link.link_status = priv.started && recovery_state(priv) == Recovery::kNone && nd.carrier != 0
                         ? RTE_ETH_LINK_UP
                         : RTE_ETH_LINK_DOWN;
  // A link that is down has no speed (as ethdev drivers report it): a returning VF's netdev that
  // reads before the port has recovered changes nothing the application sees.
  if (link.link_status == RTE_ETH_LINK_DOWN) link.link_speed = RTE_ETH_SPEED_NUM_NONE;
  return rte_eth_linkstatus_set(dev, &link);
}

}  // namespace mana
