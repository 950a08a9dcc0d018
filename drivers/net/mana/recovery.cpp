// SPDX-License-Identifier: BSD-3-Clause
#include "recovery.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <ethdev_driver.h>
#include <infiniband/verbs.h>
#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_interrupts.h>

#include "ib_sysfs.h"
#include "link_state.h"
#include "mana_log.h"
#include "mp.h"
#include "mtu.h"
#include "port_lifecycle.h"
#include "port_owner.h"
#include "priv.h"

namespace mana {
namespace {

constexpr uint64_t kPollUs = 100 * 1000;    // how often the VF is looked for
constexpr uint64_t kRetryUs = 1000 * 1000;  // after a failed re-creation
constexpr uint64_t kStartUs = 1;            // the teardown, right after the fatal event

// After a removal uverbs answers every destroy with EIO (the objects went with the device);
// libibverbs reports that as success, and frees its memory, only with this variable set before
// its first device listing (doc/hardware.md §2.7). Without it every queue, MR and PD of a removed
// port leaks. An application's own setting wins.
__attribute__((constructor)) void allow_disassociate_destroy() {
  setenv("RDMAV_ALLOW_DISASSOC_DESTROY", "1", 0);
}

uint32_t load(const uint32_t& field) {
  return std::atomic_ref<uint32_t>(const_cast<uint32_t&>(field)).load(std::memory_order_seq_cst);
}
void store(uint32_t& field, uint32_t v) {
  std::atomic_ref<uint32_t>(field).store(v, std::memory_order_seq_cst);
}
void set_state(PortPriv& priv, Recovery r) { store(priv.recovery, static_cast<uint32_t>(r)); }

void step(void* arg);

void schedule(uint16_t port_id, uint64_t us) {
  if (int rc = rte_eal_alarm_set(us, step, port_callback_arg(port_id)); rc != 0)
    MANA_DRV_LOG(ERR, "port %u: cannot schedule the recovery from the VF removal: %s", port_id,
                 strerror(-rc));
}

// RTE_ETH_EVENT_INTR_RMV tells the application that the device is gone for good: testpmd and Open
// vSwitch close the port on it. So it is raised (when the application asked for it, intr_conf.rmv)
// only when the driver will not bring the port back by itself: recovery off or failed, or an owner
// that handles removals (doc/guide.md "VF removal and recovery").
void raise_removal(rte_eth_dev* dev) {
  if (dev->data->dev_conf.intr_conf.rmv)
    rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_RMV, nullptr);
}

const char* mac_text(const PortPriv& priv, char (&buf)[RTE_ETHER_ADDR_FMT_SIZE]) {
  rte_ether_format_addr(buf, sizeof(buf), &priv.mac);
  return buf;
}

// Everything of the port's verbs context but the queues: MRs, the watch of its device events,
// PDs, the context itself.
void drop_verbs(PortPriv& priv) {
  mr_port_cache_drop_all(priv.mr, verbs_registrar(priv.pd));
  intr_uninstall(priv);
  close_port_verbs(priv);
  priv.db_page = nullptr;
}

// The old objects: queues (and their mbufs), MRs, PDs, context. uverbs freed them with the
// device; the destroy calls free what libibverbs and libmana hold.
void tear_down(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  if (priv.started) port_queues_destroy(dev);
  drop_verbs(priv);
}

// The RDMA device (any PCI address) whose port netdev has the port's MAC, opened. 1 when it is
// back and the port works again, 0 when it is not there yet, negative errno when re-creating
// failed (logged; everything opened was closed again).
int reopen(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return 0;
  ibv_device* found = nullptr;
  PortNetdev nd{};
  unsigned ib_port = 0;
  for (int i = 0; i < n && found == nullptr; i++) {
    ibv_device_attr_ex attr{};
    if (ib_port_by_mac(list[i]->ibdev_path, priv.mac, &ib_port, &nd) == 0 &&
        query_ethernet_device(list[i], priv.name, &attr))
      found = list[i];
  }
  int rc = 0;
  if (found != nullptr) {
    priv.ib_port = static_cast<uint8_t>(ib_port);
    snprintf(priv.ifname, sizeof(priv.ifname), "%s", nd.ifname);
    rc = open_port_verbs(priv, found);
    if (rc == 0) rc = intr_install(dev);
    if (rc == 0) process_private_of(priv.port_id).registrar = verbs_registrar(priv.pd);
    // Every pool the application has, in the new PD (else each would be registered by its first
    // burst after the recovery).
    if (rc == 0) rc = mr_register_all_mempools(priv.mr, verbs_registrar(priv.pd));
    // The function's new netdev takes the port's MTU before the vPort is configured again (a
    // failure is logged; the port still comes back).
    if (rc == 0) mtu_apply(dev);
    if (rc == 0 && priv.started) rc = port_queues_create(dev);
    if (rc != 0) drop_verbs(priv);
  }
  if (rc == 0 && found != nullptr) {
    rte_pci_addr pci{};
    char where[PCI_PRI_STR_SIZE] = "?";
    if (ib_device_pci_addr(found->ibdev_path, &pci) == 0)
      rte_pci_device_name(&pci, where, sizeof(where));
    MANA_DRV_LOG(INFO, "port %u (%s): the VF is back on RDMA device %s port %u, PCI %s",
                 priv.port_id, priv.ifname, found->name, priv.ib_port, where);
  }
  ibv_free_device_list(list);
  if (rc != 0) return rc;
  return found != nullptr ? 1 : 0;
}

// The VF is back with every object: secondaries map the new doorbell page, bursts run again.
void resume(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  process_private_of(priv.port_id).db_page = priv.db_page;
  mp_notify_secondaries_remap(dev);
  if (priv.started) {
    open_port_gates(dev);
    link_update(dev, 0);
  }
  set_state(priv, Recovery::kNone);
}

void fail(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  char m[RTE_ETHER_ADDR_FMT_SIZE];
  MANA_DRV_LOG(ERR,
               "port %u: no VF with MAC %s came back within recovery_timeout=%u s: the port stays "
               "stopped; once the VF is back, reset it (rte_eth_dev_reset) or close it and probe "
               "the device again (port attach)",
               priv.port_id, mac_text(priv, m), priv.recovery_timeout_s);
  set_state(priv, Recovery::kFailed);
  rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_RECOVERY_FAILED, nullptr);
  // Now the device is gone for good (an owner was told at the removal already). Last: the
  // application's callback may close the port.
  if (!owned_by_another_driver(priv.port_id)) raise_removal(dev);
}

// The EAL interrupt thread reads the verbs async fd; a fatal event (the VF is gone) starts the
// recovery.
void on_async_event(void* arg) {
  const uint16_t port_id = port_of_callback_arg(arg);
  rte_eth_dev* dev = &rte_eth_devices[port_id];
  PortPriv* priv = priv_of(dev);
  ibv_async_event event;
  while (ibv_get_async_event(priv->ctx, &event) == 0) {
    const ibv_event_type type = event.event_type;
    ibv_ack_async_event(&event);
    if (type == IBV_EVENT_DEVICE_FATAL) {
      recovery_begin(dev);  // raises the events; the application may close the port in them
      return;
    }
    MANA_DRV_LOG(DEBUG, "port %u: async event %s", port_id, ibv_event_type_str(type));
  }
}

// One recovery step, on the EAL interrupt thread; an alarm, so the async-event handler of the old
// context may be unregistered here.
void step(void* arg) {
  const uint16_t port_id = port_of_callback_arg(arg);
  rte_eth_dev* dev = &rte_eth_devices[port_id];
  PortPriv& priv = *priv_of(dev);
  if (load(priv.in_control) != 0) return;  // recovery_control_end schedules the next step
  switch (static_cast<Recovery>(load(priv.recovery))) {
    case Recovery::kTearingDown:
      tear_down(dev);
      set_state(priv, Recovery::kWaiting);
      schedule(port_id, kPollUs);
      return;
    case Recovery::kWaiting: {
      if (rte_get_timer_cycles() >= priv.recovery_deadline) return fail(dev);
      const int rc = reopen(dev);
      if (rc <= 0) return schedule(port_id, rc == 0 ? kPollUs : kRetryUs);
      resume(dev);
      // Last: the application's callback may close the port.
      rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_RECOVERY_SUCCESS, nullptr);
      return;
    }
    case Recovery::kNone:
    case Recovery::kFailed:
      return;
  }
}

}  // namespace

int dev_reset(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  recovery_control_begin(dev);  // no recovery step runs until the end
  const Recovery before = recovery_state(priv);
  // ethdev stopped the port before calling us. Objects of a removed VF that recovery did not
  // destroy yet (recovery_timeout=0, or still tearing down) go now, those of a healthy one too.
  if (priv.ctx != nullptr) tear_down(dev);
  int rc = reopen(dev);
  char m[RTE_ETHER_ADDR_FMT_SIZE];
  if (rc > 0) {
    resume(dev);
    MANA_DRV_LOG(INFO, "port %u (%s): reset: the port can be configured and started again",
                 priv.port_id, priv.ifname);
    rc = 0;
  } else if (before == Recovery::kTearingDown || before == Recovery::kWaiting) {
    // A recovery under way goes on (recovery_control_end schedules its next step): a reset that
    // found no VF must not end it as failed.
    set_state(priv, Recovery::kWaiting);
    MANA_DRV_LOG(ERR,
                 "port %u: reset: the VF with MAC %s is removed and not back yet; no reset is "
                 "needed: the port recovers by itself when it is back "
                 "(RTE_ETH_EVENT_RECOVERY_SUCCESS): start it then",
                 priv.port_id, mac_text(priv, m));
    if (rc == 0) rc = -ENODEV;
  } else {
    set_state(priv, Recovery::kFailed);
    MANA_DRV_LOG(ERR,
                 "port %u: reset: no usable VF with MAC %s is there: the port stays stopped; reset "
                 "it again once the VF is back",
                 priv.port_id, mac_text(priv, m));
    if (rc == 0) rc = -ENODEV;
  }
  recovery_control_end(dev);
  return rc;
}

void recovery_begin(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  if (recovery_state(priv) != Recovery::kNone) return;
  // No burst of any process touches the dead queues from here on.
  close_port_gates(dev);
  char m[RTE_ETHER_ADDR_FMT_SIZE];
  char note[kOwnerNoteLen];
  const bool owned = owner_removal_note(priv.port_id, note, sizeof(note))[0] != '\0';
  if (priv.recovery_timeout_s == 0) {
    set_state(priv, Recovery::kFailed);
    // Under an owner the application never sees this port: what happens is the owner's doing.
    if (owned)
      MANA_DRV_LOG(ERR, "port %u (%s): the VF was removed (recovery_timeout=0)%s", priv.port_id,
                   priv.ifname, note);
    else
      MANA_DRV_LOG(ERR,
                   "port %u (%s): the VF was removed; recovery_timeout=0: the port stays stopped: "
                   "close it, or reset it (rte_eth_dev_reset) once the VF is back",
                   priv.port_id, priv.ifname);
  } else {
    priv.recovery_deadline =
        rte_get_timer_cycles() + uint64_t{priv.recovery_timeout_s} * rte_get_timer_hz();
    set_state(priv, Recovery::kTearingDown);
    if (load(priv.in_control) == 0) schedule(priv.port_id, kStartUs);
    MANA_DRV_LOG(WARNING,
                 "port %u (%s): the VF was removed: bursts return 0 until a VF with MAC %s is "
                 "back (waiting up to %u s)%s",
                 priv.port_id, priv.ifname, mac_text(priv, m), priv.recovery_timeout_s,
                 owned ? note : "; the removal event follows only if it does not come back");
  }
  if (priv.recovery_timeout_s == 0 || owned) raise_removal(dev);
  if (priv.recovery_timeout_s != 0)
    rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_ERR_RECOVERING, nullptr);
}

// ---- the TX stall watchdog's hook (tx_watchdog.h) ----
int recovery_reset_queues(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  if (load(priv.in_control) != 0 || recovery_state(priv) != Recovery::kNone || !priv.started)
    return -EBUSY;
  close_port_gates(dev);
  port_queues_destroy(dev);
  if (const int rc = port_queues_create(dev); rc != 0) {
    MANA_DRV_LOG(ERR,
                 "port %u (%s): creating the queues again failed (%s): bursts return 0; stop "
                 "and start the port, or reset it (rte_eth_dev_reset)",
                 priv.port_id, priv.ifname, strerror(-rc));
    return rc;
  }
  open_port_gates(dev);
  return 0;
}

void recovery_control_begin(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  store(priv.in_control, 1);
  // Waits for a step running on the interrupt thread (unless this is that thread).
  rte_eal_alarm_cancel(step, port_callback_arg(priv.port_id));
}

void recovery_control_end(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  store(priv.in_control, 0);
  const Recovery r = recovery_state(priv);
  if (r == Recovery::kTearingDown || r == Recovery::kWaiting) schedule(priv.port_id, kStartUs);
}

void recovery_cancel(rte_eth_dev* dev) {
  PortPriv& priv = *priv_of(dev);
  rte_eal_alarm_cancel(step, port_callback_arg(priv.port_id));
  set_state(priv, Recovery::kNone);
}

// ---- the device events that start it ----
int intr_install(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  const int fd = priv->ctx->async_fd;
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    const int err = errno;  // the log call may change errno
    MANA_INIT_LOG(ERR, "%s: cannot make the verbs async fd non-blocking: %s", priv->name,
                  strerror(err));
    return -err;
  }
  priv->intr = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_SHARED);
  if (priv->intr == nullptr) {
    MANA_INIT_LOG(ERR, "%s: out of memory for the interrupt handle", priv->name);
    return -ENOMEM;
  }
  rte_intr_fd_set(priv->intr, fd);
  rte_intr_type_set(priv->intr, RTE_INTR_HANDLE_EXT);
  void* arg = reinterpret_cast<void*>(static_cast<uintptr_t>(dev->data->port_id));
  if (int rc = rte_intr_callback_register(priv->intr, on_async_event, arg); rc != 0) {
    MANA_INIT_LOG(ERR, "%s: cannot watch device events: %s", priv->name, strerror(-rc));
    rte_intr_instance_free(priv->intr);
    priv->intr = nullptr;
    return rc;
  }
  return 0;
}

void intr_uninstall(PortPriv& priv) {
  if (priv.intr == nullptr) return;
  void* arg = reinterpret_cast<void*>(static_cast<uintptr_t>(priv.port_id));
  // Waits for a callback running on the interrupt thread to return.
  rte_intr_callback_unregister_sync(priv.intr, on_async_event, arg);
  rte_intr_instance_free(priv.intr);
  priv.intr = nullptr;
}

}  // namespace mana
