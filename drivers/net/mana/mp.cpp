// SPDX-License-Identifier: BSD-3-Clause
#include "mp.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <bus_pci_driver.h>
#include <ethdev_driver.h>
#include <infiniband/verbs.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "burst.h"
#include "descriptor_status.h"
#include "dpdk_compat.h"
#include "mana_log.h"
#include "priv.h"

namespace mana {
namespace {

constexpr char kAction[] = "net_mana_mp";
constexpr int kTimeoutSec = 5;

// Our own numbering (doc/guide.md "Memory registration"); 5 and 6 are upstream's reset messages.
enum MpType : int {
  kCmdFd = 1,
  kRegisterMr = 2,
  kStartRxTx = 3,
  kStopRxTx = 4,
  kDeregisterMr = 7,
  kRemap = 8,  // after recovery: map the new doorbell page (fd attached)
};

struct MpParam {
  int type;
  uint16_t port_id;
  int result;
  uint64_t addr;
  uint64_t len;
  uint32_t lkey;
  uint64_t handle;
};
static_assert(sizeof(MpParam) <= RTE_MP_MAX_PARAM_LEN);

unsigned g_users = 0;  // probed PCI functions of this process that use the action

rte_mp_msg make_msg(MpType type, uint16_t port_id) {
  rte_mp_msg msg{};
  snprintf(msg.name, sizeof(msg.name), "%s", kAction);
  MpParam p{};
  p.type = type;
  p.port_id = port_id;
  std::memcpy(msg.param, &p, sizeof(p));
  msg.len_param = sizeof(p);
  return msg;
}

MpParam param_of(const rte_mp_msg* msg) {
  MpParam p{};
  std::memcpy(&p, msg->param, sizeof(p));
  return p;
}

int reply(const rte_mp_msg* req, const void* peer, const MpParam& p, int fd = -1) {
  rte_mp_msg msg{};
  snprintf(msg.name, sizeof(msg.name), "%s", req->name);
  std::memcpy(msg.param, &p, sizeof(p));
  msg.len_param = sizeof(p);
  if (fd >= 0) {
    msg.fds[0] = fd;
    msg.num_fds = 1;
  }
  return rte_mp_reply(&msg, static_cast<const char*>(peer));
}

int on_primary_request(const rte_mp_msg* msg, const void* peer) {
  MpParam p = param_of(msg);
  if (!rte_eth_dev_is_valid_port(p.port_id)) {
    p.result = -ENODEV;
    return reply(msg, peer, p);
  }
  PortPriv* priv = priv_of(&rte_eth_devices[p.port_id]);
  if (priv->ctx == nullptr) {  // the VF is removed (recovery.h)
    p.result = -ENODEV;
    return reply(msg, peer, p);
  }
  switch (p.type) {
    case kCmdFd:
      p.result = 0;
      return reply(msg, peer, p, priv->ctx->cmd_fd);
    case kRegisterMr: {
      const MrRegistrar r = verbs_registrar(priv->pd);
      void* handle = nullptr;
      p.result = r.reg(r.ctx, p.addr, p.len, &p.lkey, &handle);
      p.handle = reinterpret_cast<uintptr_t>(handle);
      return reply(msg, peer, p);
    }
    case kDeregisterMr: {  // a secondary destroyed a mempool it had registered through us
      const MrRegistrar r = verbs_registrar(priv->pd);
      r.dereg(r.ctx, reinterpret_cast<void*>(static_cast<uintptr_t>(p.handle)));
      p.result = 0;
      return reply(msg, peer, p);
    }
    default:
      p.result = -EINVAL;
      return reply(msg, peer, p);
  }
}

void install_bursts(uint16_t port_id, bool started) {
  rte_eth_dev* dev = &rte_eth_devices[port_id];
  dev->rx_pkt_burst =
      started ? select_rx_burst(dev->data->dev_conf.rxmode.offloads) : rx_burst_stopped;
  dev->tx_pkt_burst = started ? select_port_tx_burst(dev) : tx_burst_stopped;
  // 22.11 captured the fast-path ops at attach time: update them too (doc/hardware.md §3.6).
  rte_eth_fp_ops[port_id].rx_pkt_burst = dev->rx_pkt_burst;
  rte_eth_fp_ops[port_id].tx_pkt_burst = dev->tx_pkt_burst;
  rte_eth_fp_ops[port_id].tx_pkt_prepare = dev->tx_pkt_prepare;
  rte_eth_fp_ops[port_id].rxq.data = dev->data->rx_queues;
  rte_eth_fp_ops[port_id].txq.data = dev->data->tx_queues;
  rte_wmb();
}

// Maps the page behind a verbs cmd fd (the doorbell page of the primary's context).
void* map_doorbell_page(int fd) {
  void* page = mmap(nullptr, compat::page_size(), PROT_WRITE, MAP_SHARED, fd, 0);
  return page == MAP_FAILED ? nullptr : page;
}

// After a recovery the primary's context is new: map its page, drop the old one. Every gate of the
// port is closed meanwhile, so no burst of this process uses the page.
int remap_doorbell_page(uint16_t port_id, const rte_mp_msg* msg) {
  if (msg->num_fds != 1) return -EINVAL;
  void* page = map_doorbell_page(msg->fds[0]);
  const int err = errno;
  close(msg->fds[0]);
  auto* pp = static_cast<ProcessPrivate*>(rte_eth_devices[port_id].process_private);
  if (page == nullptr || pp == nullptr) {
    MANA_DRV_LOG(ERR, "port %u: cannot map the primary's new doorbell page: %s", port_id,
                 strerror(page == nullptr ? err : ENODEV));
    if (page != nullptr) munmap(page, compat::page_size());
    return -ENODEV;
  }
  void* old = pp->db_page;
  pp->db_page = page;
  if (old != nullptr) munmap(old, compat::page_size());
  return 0;
}

int on_secondary_request(const rte_mp_msg* msg, const void* peer) {
  MpParam p = param_of(msg);
  p.result = 0;
  if (!rte_eth_dev_is_valid_port(p.port_id))
    p.result = -ENODEV;
  else if (p.type == kRemap)
    p.result = remap_doorbell_page(p.port_id, msg);
  else if (p.type == kStartRxTx || p.type == kStopRxTx)
    install_bursts(p.port_id, p.type == kStartRxTx);
  else
    p.result = -EINVAL;
  return reply(msg, peer, p);
}

int action_ref() {
  if (g_users++ != 0) return 0;
  const bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
  const int rc =
      rte_mp_action_register(kAction, primary ? on_primary_request : on_secondary_request);
  if (rc != 0 && rte_errno != EEXIST && rte_errno != ENOTSUP) {
    MANA_INIT_LOG(ERR, "cannot register the multi-process action %s: %s", kAction,
                  rte_strerror(rte_errno));
    g_users--;
    return -rte_errno;
  }
  return 0;
}

void action_unref() {
  if (g_users == 0 || --g_users != 0) return;
  rte_mp_action_unregister(kAction);
}

// Sends `msg` to the primary and waits for its one reply.
int request_primary(rte_mp_msg* msg, rte_mp_msg* out) {
  struct rte_mp_reply replies {};
  timespec ts{kTimeoutSec, 0};
  if (rte_mp_request_sync(msg, &replies, &ts) != 0 || replies.nb_received != 1) {
    free(replies.msgs);
    return -EIO;
  }
  *out = replies.msgs[0];
  free(replies.msgs);
  return 0;
}

int mp_reg(void* ctx, uintptr_t start, size_t len, uint32_t* lkey, void** handle) {
  rte_mp_msg msg = make_msg(kRegisterMr, static_cast<uint16_t>(reinterpret_cast<uintptr_t>(ctx)));
  MpParam p = param_of(&msg);
  p.addr = start;
  p.len = len;
  std::memcpy(msg.param, &p, sizeof(p));
  rte_mp_msg answer;
  if (int rc = request_primary(&msg, &answer); rc != 0) return rc;
  p = param_of(&answer);
  if (p.result != 0) return p.result;
  *lkey = p.lkey;
  *handle = reinterpret_cast<void*>(p.handle);  // the primary's MR, deregistered at its close
  return 0;
}

// Called when this secondary destroys a mempool (its ranges already left the table). MRs of
// pools that outlive the secondary stay with the primary, deregistered at its close.
void mp_dereg(void* ctx, void* handle) {
  rte_mp_msg msg = make_msg(kDeregisterMr, static_cast<uint16_t>(reinterpret_cast<uintptr_t>(ctx)));
  MpParam p = param_of(&msg);
  p.handle = reinterpret_cast<uintptr_t>(handle);
  std::memcpy(msg.param, &p, sizeof(p));
  rte_mp_msg answer;
  if (request_primary(&msg, &answer) != 0 || param_of(&answer).result != 0)
    MANA_DRV_LOG(WARNING, "port %u: the primary did not confirm the deregistration of an MR",
                 p.port_id);
}

void notify(rte_eth_dev* dev, MpType type, int fd = -1) {
  rte_mp_msg msg = make_msg(type, dev->data->port_id);
  if (fd >= 0) {
    msg.fds[0] = fd;
    msg.num_fds = 1;
  }
  struct rte_mp_reply replies {};
  timespec ts{kTimeoutSec, 0};
  // ENOTSUP: multi-process is disabled (--in-memory, --no-shconf): nobody to tell.
  if (rte_mp_request_sync(&msg, &replies, &ts) != 0 && rte_errno != ENOTSUP)
    MANA_DRV_LOG(WARNING,
                 "port %u: secondary processes did not all confirm the %s of the data path",
                 dev->data->port_id,
                 type == kStartRxTx  ? "start"
                 : type == kStopRxTx ? "stop"
                                     : "new doorbell page");
  for (int i = 0; i < replies.nb_received; i++)
    if (param_of(&replies.msgs[i]).result != 0)
      MANA_DRV_LOG(ERR, "port %u: a secondary process failed to follow (%s): restart it",
                   dev->data->port_id, strerror(-param_of(&replies.msgs[i]).result));
  free(replies.msgs);
}

}  // namespace

int mp_init_primary() { return action_ref(); }
void mp_uninit_primary() { action_unref(); }

void mp_notify_secondaries_start(rte_eth_dev* dev) { notify(dev, kStartRxTx); }
void mp_notify_secondaries_stop(rte_eth_dev* dev) { notify(dev, kStopRxTx); }
void mp_notify_secondaries_remap(rte_eth_dev* dev) {
  notify(dev, kRemap, priv_of(dev)->ctx->cmd_fd);
}

int mp_attach_secondary(rte_pci_device* pci, const char* name, const eth_dev_ops* ops) {
  if (int rc = action_ref(); rc != 0) return rc;
  rte_eth_dev* dev = rte_eth_dev_attach_secondary(name);
  if (dev == nullptr) {
    MANA_INIT_LOG(ERR, "%s: the primary process has no such port", name);
    action_unref();
    return -ENODEV;
  }
  auto* pp = static_cast<ProcessPrivate*>(
      rte_zmalloc("mana_proc", sizeof(ProcessPrivate), RTE_CACHE_LINE_SIZE));
  rte_mp_msg msg = make_msg(kCmdFd, dev->data->port_id);
  rte_mp_msg answer;
  int rc = pp ? request_primary(&msg, &answer) : -ENOMEM;
  if (rc == 0 && (param_of(&answer).result != 0 || answer.num_fds != 1)) rc = -EIO;
  if (rc == 0) {
    const int fd = answer.fds[0];
    void* page = map_doorbell_page(fd);
    rc = page == nullptr ? -errno : 0;
    close(fd);
    pp->db_page = page;
  }
  if (rc != 0) {
    MANA_INIT_LOG(ERR, "%s: cannot map the primary's doorbell page: %s", name, strerror(-rc));
    rte_free(pp);
    rte_eth_dev_release_port(dev);
    action_unref();
    return rc;
  }
  pp->bursts_open = 1;
  pp->registrar = MrRegistrar{mp_reg, mp_dereg,
                              reinterpret_cast<void*>(static_cast<uintptr_t>(dev->data->port_id))};
  dev->process_private = pp;
  // Pools this process creates from now on are registered as they become ready; those it created
  // before are registered now (the primary may not have seen them complete).
  pp->mr_events = MrEventSubscription{&priv_of(dev)->mr, pp->registrar};
  if (mr_events_subscribe(&pp->mr_events) != 0 ||
      mr_register_all_mempools(priv_of(dev)->mr, pp->registrar) != 0)
    MANA_INIT_LOG(WARNING, "%s: mempools are registered on first use by this process", name);
  dev->device = &pci->device;
  dev->dev_ops = ops;
  const bool started = priv_of(dev)->started;
  dev->rx_pkt_burst =
      started ? select_rx_burst(dev->data->dev_conf.rxmode.offloads) : rx_burst_stopped;
  dev->tx_pkt_burst = started ? select_port_tx_burst(dev) : tx_burst_stopped;
  dev->tx_pkt_prepare = tx_prepare;
  install_descriptor_ops(dev);
  rte_eth_dev_probing_finish(dev);
  return 0;
}

// The secondary's own lcores may still be in a burst: new ones return at once, and the page is
// unmapped only after those inside have left (queue_gate.h).
void mp_detach_secondary(rte_eth_dev* dev) {
  auto* pp = static_cast<ProcessPrivate*>(dev->process_private);
  install_bursts(dev->data->port_id, false);
  if (pp != nullptr) {
    const uint16_t nb_rx = dev->data->nb_rx_queues, nb_tx = dev->data->nb_tx_queues;
    QueueGate* gates[RTE_MAX_QUEUES_PER_PORT * 2];
    unsigned n = 0;
    for (uint16_t i = 0; i < nb_rx; i++)
      if (auto* q = rxq_of(dev, i); q != nullptr) gates[n++] = &q->gate;
    for (uint16_t i = 0; i < nb_tx; i++)
      if (auto* q = txq_of(dev, i); q != nullptr) gates[n++] = &q->gate;
    if (!gates_close_for_process(pp->bursts_open, gates, n, kGateTimeoutMs))
      MANA_DRV_LOG(ERR,
                   "port %u: a burst of this process stayed inside a queue for %u ms: "
                   "detaching anyway",
                   dev->data->port_id, kGateTimeoutMs);
  }
  if (pp != nullptr) mr_events_unsubscribe(&pp->mr_events);
  if (pp != nullptr && pp->db_page != nullptr) munmap(pp->db_page, compat::page_size());
  action_unref();
}

}  // namespace mana
