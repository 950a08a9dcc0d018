// SPDX-License-Identifier: BSD-3-Clause
// Probe of one MANA PCI function (doc/hardware.md §2.1, §2.2): find its Ethernet RDMA device,
// select the ports (all, or those whose MAC is given with mac=), and create one ethdev per port
// with its own verbs context, PD and parent domain.
#include "probe.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include <bus_pci_driver.h>
#include <ethdev_driver.h>
#include <ethdev_pci.h>
#include <infiniband/verbs.h>
#include <rte_cycles.h>
#include <rte_devargs.h>
#include <rte_malloc.h>

#include "burst.h"
#include "descriptor_status.h"
#include "devargs.h"
#include "ethdev_ops.h"
#include "ib_sysfs.h"
#include "mana/toeplitz.h"
#include "mana_log.h"
#include "rx_mode.h"
#include "mp.h"
#include "priv.h"
#include "port_lifecycle.h"
#include "queue_create.h"
#include "recovery.h"

namespace mana {
namespace {

constexpr unsigned kMaxPortsPerFunction = 16;
// How long a probe waits for mana_ib to register the RDMA device of a function whose netdev is
// there already, and how often it looks.
constexpr unsigned kRdmaDeviceWaitMs = 5000;
constexpr unsigned kRdmaDeviceRetryMs = 50;
// How long a probe looks again for a port's netdev that vanished between listing the function's
// netdevs and reading one (udev renames a new netdev, e.g. eth1 to enP30832s1, right after the
// kernel registers it: DPDK commit fdd4238fd0), and how often.
constexpr unsigned kRenameWaitMs = 1000;
constexpr unsigned kRenameRetryMs = 20;

struct Candidate {
  ibv_device* ibdev;
  unsigned ib_port;
  PortNetdev netdev;
  DeviceCaps caps;
};

// The ethdev name of IB port `ib_port` of `pci`: the PCI address for the first port, as DPDK
// names the port of a one-port device (what `dpdk-dumpcap -i <pci>` and DTS look up; an Azure VF
// has one port), and "<pci>_port<p>" for a function's further ports. Primary and secondary
// derive it alike, without querying the device.
void port_name(const rte_pci_device* pci, unsigned ib_port, char* name, size_t size) {
  if (ib_port == 1)
    snprintf(name, size, "%s", pci->name);
  else
    snprintf(name, size, "%s_port%u", pci->name, ib_port);
}

bool has_port(const Candidate* c, unsigned count, unsigned ib_port) {
  for (unsigned i = 0; i < count; i++)
    if (c[i].ib_port == ib_port) return true;
  return false;
}

// The netdev of IB port `port`, looked for again for a bounded time (kRenameWaitMs) while the
// function has a netdev at all: a rename (udev's, right after the kernel registered it) hides it
// for a moment. Primary only: a secondary takes what the primary probed.
int port_netdev_across_rename(const char* ibdev_path, unsigned port, bool primary,
                              PortNetdev* out) {
  int rc = ib_port_netdev(ibdev_path, port, out);
  for (unsigned waited = 0; rc != 0 && primary && waited < kRenameWaitMs;
       waited += kRenameRetryMs) {
    char net[PATH_MAX];
    snprintf(net, sizeof(net), "%s/device/net", ibdev_path);
    DIR* dir = opendir(net);
    if (dir == nullptr) break;
    bool any = false;
    while (const dirent* e = readdir(dir))
      if (e->d_name[0] != '.') any = true;
    closedir(dir);
    if (!any) break;
    usleep(kRenameRetryMs * 1000);
    rc = ib_port_netdev(ibdev_path, port, out);
  }
  return rc;
}

// Collects the ports of `pci` that the devargs select. Returns their number, or a negative errno.
// A secondary process does not open the device (the primary owns it): it takes the ports from
// sysfs and attaches to the ethdevs of the primary.
int find_ports(rte_pci_device* pci, const Devargs& devargs, ibv_device** list, int n, bool primary,
               Candidate* out) {
  bool mac_found[kMaxMacDevargs] = {};
  unsigned count = 0;
  const char* some_ibdev_path = nullptr;
  for (int i = 0; i < n; i++) {
    rte_pci_addr addr;
    const int rc = ib_device_pci_addr(list[i]->ibdev_path, &addr);
    if (rc != 0) {
      MANA_INIT_LOG(DEBUG, "RDMA device %s: no PCI_SLOT_NAME in %s/device/uevent: skipped",
                    list[i]->name, list[i]->ibdev_path);
      continue;
    }
    if (rte_pci_addr_cmp(&addr, &pci->addr) != 0) continue;
    ibv_device_attr_ex attr{};
    unsigned ports = kMaxPortsPerFunction;
    if (primary) {
      if (!query_ethernet_device(list[i], pci->name, &attr)) continue;
      ports = attr.orig_attr.phys_port_cnt;
    }
    some_ibdev_path = list[i]->ibdev_path;
    for (unsigned port = 1; port <= ports; port++) {
      PortNetdev nd;
      if (port_netdev_across_rename(list[i]->ibdev_path, port, primary, &nd) != 0) {
        if (primary)
          MANA_INIT_LOG(WARNING,
                        "%s: RDMA device %s port %u has no netdev with dev_port %u yet (the "
                        "kernel's mana driver still registering or renaming it?): skipped; probe "
                        "again once %s/device/net lists it (doc/guide.md \"Link status and "
                        "speed\")",
                        pci->name, list[i]->name, port, port - 1, list[i]->ibdev_path);
        continue;
      }
      if (!primary && has_port(out, count, port)) continue;  // seen through another RDMA device
      if (!devargs.wants(nd.mac)) continue;
      for (unsigned m = 0; m < devargs.mac_count; m++)
        if (rte_is_same_ether_addr(&devargs.macs[m], &nd.mac)) mac_found[m] = true;
      if (count == kMaxPortsPerFunction) break;
      out[count++] = Candidate{list[i], port, nd, caps_of(attr)};
    }
  }
  if (some_ibdev_path == nullptr) {
    MANA_INIT_LOG(ERR,
                  "%s: no MANA Ethernet RDMA device belongs to this PCI function: load the kernel "
                  "modules (modprobe mana_ib ib_uverbs) and install rdma-core >= 44's MANA "
                  "provider (Debian/Ubuntu: ibverbs-providers); mana-doctor checks both",
                  pci->name);
    return -ENODEV;
  }
  for (unsigned m = 0; m < devargs.mac_count; m++) {
    if (mac_found[m]) continue;
    char wanted[RTE_ETHER_ADDR_FMT_SIZE];
    char existing[512];
    rte_ether_format_addr(wanted, sizeof(wanted), &devargs.macs[m]);
    list_port_macs(some_ibdev_path, existing, sizeof(existing));
    MANA_INIT_LOG(ERR, "%s: no port has MAC %s (mac= devargs): the ports are: %s", pci->name,
                  wanted, existing[0] ? existing : "none");
    return -ENODEV;
  }
  return static_cast<int>(count);
}

int create_port(rte_pci_device* pci, const Candidate& c, const Devargs& devargs) {
  char name[RTE_ETH_NAME_MAX_LEN];
  port_name(pci, c.ib_port, name, sizeof(name));
  const int socket = pci->device.numa_node;
  rte_eth_dev* dev = rte_eth_dev_allocate(name);
  if (dev == nullptr) {
    MANA_INIT_LOG(ERR, "%s: cannot allocate an ethdev (is the port already probed?)", name);
    return -ENOMEM;
  }
  auto* priv = static_cast<PortPriv*>(
      rte_zmalloc_socket("mana_priv", sizeof(PortPriv), RTE_CACHE_LINE_SIZE, socket));
  auto* mac = static_cast<rte_ether_addr*>(
      rte_zmalloc_socket("mana_mac", sizeof(rte_ether_addr), 0, socket));
  auto* pp = static_cast<ProcessPrivate*>(
      rte_zmalloc_socket("mana_proc", sizeof(ProcessPrivate), RTE_CACHE_LINE_SIZE, socket));
  dev->data->dev_private = priv;
  dev->data->mac_addrs = mac;
  dev->process_private = pp;
  int rc = (priv && mac && pp) ? 0 : -ENOMEM;
  if (rc != 0) MANA_INIT_LOG(ERR, "%s: out of DPDK memory", name);
  if (rc == 0) {
    pp->bursts_open = 1;
    rx_mode_init(dev);
    priv->ib_port = static_cast<uint8_t>(c.ib_port);
    priv->port_id = dev->data->port_id;
    snprintf(priv->ifname, sizeof(priv->ifname), "%s", c.netdev.ifname);
    snprintf(priv->name, sizeof(priv->name), "%s", name);
    priv->mac = c.netdev.mac;
    priv->caps = c.caps;
    priv->socket = socket;
    std::memcpy(priv->rss_key, kDefaultRssKey, sizeof(priv->rss_key));
    *mac = c.netdev.mac;
    priv->recovery_timeout_s = devargs.recovery_timeout_s;
    priv->tx_stall_timeout_s = devargs.tx_stall_timeout_s;
    rc = open_port_verbs(*priv, c.ibdev);
    if (rc == 0) priv->caps.provider_max_wr = probe_provider_max_wr(*priv);
  }
  if (rc == 0) {
    rc = mr_port_cache_init(priv->mr, socket);
    if (rc != 0) MANA_INIT_LOG(ERR, "%s: out of DPDK memory for the MR cache", name);
  }
  if (rc == 0) {
    pp->registrar = verbs_registrar(priv->pd);
    // Pools this process creates while the port exists are registered when they become ready.
    pp->mr_events = MrEventSubscription{&priv->mr, pp->registrar};
    rc = mr_events_subscribe(&pp->mr_events);
  }
  if (rc == 0) rc = intr_install(dev);
  if (rc != 0) {
    if (pp != nullptr) mr_events_unsubscribe(&pp->mr_events);
    if (priv != nullptr) {  // the device events are not watched yet: intr_install is last
      mr_port_cache_release(priv->mr, verbs_registrar(priv->pd));  // no-op if never initialised
      close_port_verbs(*priv);
    }
    rte_free(pp);
    dev->process_private = nullptr;
    rte_eth_dev_release_port(dev);
    return rc;
  }
  rte_eth_copy_pci_info(dev, pci);
  // Link state change events: the link watch (link_state.h) raises them.
  dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC;
  dev->device = &pci->device;
  dev->dev_ops = primary_dev_ops();
  dev->rx_pkt_burst = rx_burst_stopped;
  dev->tx_pkt_burst = tx_burst_stopped;
  dev->tx_pkt_prepare = tx_prepare;
  install_descriptor_ops(dev);
  rte_eth_dev_probing_finish(dev);
  char m[RTE_ETHER_ADDR_FMT_SIZE];
  rte_ether_format_addr(m, sizeof(m), &priv->mac);
  MANA_INIT_LOG(INFO, "%s: port %u, %s (%s) on RDMA device %s port %u", name, priv->port_id, m,
                priv->ifname, c.ibdev->name, c.ib_port);
  return 0;
}

void close_all_ports(rte_pci_device* pci) {
  const bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
  uint16_t port_id;
  RTE_ETH_FOREACH_DEV_OF(port_id, &pci->device) {
    if (primary) rte_eth_dev_stop(port_id);
    rte_eth_dev_close(port_id);
  }
}

// True when the kernel's mana driver shows a netdev of the function (<pci sysfs>/net/<if>).
bool function_has_netdev(const rte_pci_device* pci) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/%s/net", rte_pci_get_sysfs_path(), pci->name);
  DIR* dir = opendir(path);
  if (dir == nullptr) return false;
  bool found = false;
  while (const dirent* e = readdir(dir))
    if (e->d_name[0] != '.') found = true;
  closedir(dir);
  return found;
}

bool lists_rdma_device_of(const rte_pci_device* pci, ibv_device** list, int n) {
  for (int i = 0; i < n; i++) {
    rte_pci_addr addr;
    if (ib_device_pci_addr(list[i]->ibdev_path, &addr) == 0 &&
        rte_pci_addr_cmp(&addr, &pci->addr) == 0)
      return true;
  }
  return false;
}

// A function without a netdev (hence without an RDMA device, which mana_ib registers after it):
// the kernel's mana driver has not registered its netdevs yet, which can take more than 100 s
// after a PCI rescan or hot add on Azure (DPDK commit 03d66f18dd), or is not bound to it. No
// bounded wait here could cover that, and a probe runs on the thread of the EAL alarms (net_netvsc
// probes its VF from one): -ENODEV at once, which net_netvsc (DPDK 26.07) retries every second,
// with one line that says what the probe lacks.
int no_netdev_yet(const rte_pci_device* pci) {
  MANA_INIT_LOG(ERR,
                "%s: the PCI function has no netdev yet (%s/%s/net is empty or missing): the "
                "kernel's mana driver is still probing it (after a hot add or PCI rescan this can "
                "take minutes) or is not bound to it (lsmod | grep mana); probe again once its "
                "netdev is there (net_netvsc retries by itself)",
                pci->name, rte_pci_get_sysfs_path(), pci->name);
  return -ENODEV;
}

// The RDMA device list, after waiting (bounded) for the function's RDMA device when the function
// is there with its netdev but without it: the kernel's mana driver registers the netdevs before
// mana_ib registers the RDMA device, so a probe right after a hot add (net_netvsc's, or EAL's
// hot-plug) can come in between (doc/hardware.md §2.1). Null (logged) when nothing can be listed.
ibv_device** rdma_device_list(rte_pci_device* pci, bool primary, int* n) {
  const uint64_t hz = rte_get_timer_hz();
  const uint64_t deadline = rte_get_timer_cycles() + hz * kRdmaDeviceWaitMs / 1000;
  bool waiting = false;
  for (;;) {
    ibv_device** list = ibv_get_device_list(n);
    if (list == nullptr) {
      MANA_INIT_LOG(ERR, "%s: cannot list RDMA devices: %s: load ib_uverbs and mana_ib", pci->name,
                    strerror(errno));
      return nullptr;
    }
    if (!primary || lists_rdma_device_of(pci, list, *n) || !function_has_netdev(pci) ||
        rte_get_timer_cycles() >= deadline) {
      if (waiting)
        MANA_INIT_LOG(NOTICE, "%s: %s its RDMA device", pci->name,
                      lists_rdma_device_of(pci, list, *n) ? "found" : "gave up waiting for");
      return list;
    }
    if (!waiting)
      MANA_INIT_LOG(NOTICE,
                    "%s: the netdev is there but not its RDMA device yet: waiting up to %u ms "
                    "for mana_ib to register it",
                    pci->name, kRdmaDeviceWaitMs);
    waiting = true;
    ibv_free_device_list(list);
    usleep(kRdmaDeviceRetryMs * 1000);
  }
}

// Creates (primary) or attaches to (secondary) the ethdev of every selected port.
int probe_function(rte_pci_device* pci, const Devargs& devargs, bool primary) {
  int n = 0;
  ibv_device** list = rdma_device_list(pci, primary, &n);
  if (list == nullptr) return -ENODEV;
  if (primary && !lists_rdma_device_of(pci, list, n) && !function_has_netdev(pci)) {
    ibv_free_device_list(list);
    return no_netdev_yet(pci);
  }
  Candidate cands[kMaxPortsPerFunction];
  int rc = find_ports(pci, devargs, list, n, primary, cands);
  if (rc == 0) {
    MANA_INIT_LOG(ERR, "%s: no port to probe", pci->name);
    rc = -ENODEV;
  }
  const int count = rc;
  for (int i = 0; i < count; i++) {
    if (primary) {
      rc = create_port(pci, cands[i], devargs);
    } else {
      char name[RTE_ETH_NAME_MAX_LEN];
      port_name(pci, cands[i].ib_port, name, sizeof(name));
      rc = mp_attach_secondary(pci, name, secondary_dev_ops());
    }
    if (rc != 0) {
      close_all_ports(pci);
      break;
    }
  }
  ibv_free_device_list(list);
  return rc < 0 ? rc : 0;
}

}  // namespace

int probe_pci_device(rte_pci_device* pci) {
  const char* args = pci->device.devargs ? pci->device.devargs->args : nullptr;
  Devargs devargs;
  char error[256];
  if (int rc = parse_devargs(args, devargs, error, sizeof(error)); rc != 0) {
    MANA_INIT_LOG(ERR, "%s: %s", pci->name, error);
    return rc;
  }
  warn_ignored_allow_entries(pci->name, pci->addr, pci->device.devargs);
  if (rte_eal_process_type() != RTE_PROC_PRIMARY) return probe_function(pci, devargs, false);
  if (int rc = mp_init_primary(); rc != 0) return rc;
  const int rc = probe_function(pci, devargs, true);
  if (rc != 0) mp_uninit_primary();
  return rc;
}

int remove_pci_device(rte_pci_device* pci) {
  close_all_ports(pci);
  if (rte_eal_process_type() == RTE_PROC_PRIMARY) mp_uninit_primary();
  return 0;
}

}  // namespace mana
