// SPDX-License-Identifier: BSD-3-Clause
#include "intr.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include <ethdev_driver.h>
#include <infiniband/verbs.h>
#include <rte_interrupts.h>

#include "mana_log.h"
#include "priv.h"
#include "recovery.h"

namespace mana {
namespace {

void on_async_event(void* arg) {
  const uint16_t port_id = static_cast<uint16_t>(reinterpret_cast<uintptr_t>(arg));
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

}  // namespace

int intr_install(rte_eth_dev* dev) {
  PortPriv* priv = priv_of(dev);
  const int fd = priv->ctx->async_fd;
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    MANA_INIT_LOG(ERR, "%s: cannot make the verbs async fd non-blocking: %s", priv->name,
                  strerror(errno));
    return -errno;
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
