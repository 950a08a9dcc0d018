// SPDX-License-Identifier: BSD-3-Clause
#include "verbs_errors.h"

#include <cerrno>
#include <cstring>

#include "mana_log.h"
#include "recovery_state.h"

namespace mana {

int log_queue_create_error(const PortPriv& priv, const char* what, int err) {
  if (err == 0) err = EIO;
  if (recovery_state(priv) != Recovery::kNone) {
    MANA_DRV_LOG(ERR, "port %u (%s): cannot create %s: the VF is removed (%s)", priv.port_id,
                 priv.ifname, what, strerror(err));
    return -err;
  }
  // The vPort is taken: ENODEV from 6.x kernels, EBUSY from newer ones (doc/hardware.md §5.3).
  if (err == ENODEV || err == EBUSY)
    MANA_DRV_LOG(ERR,
                 "port %u: the kernel interface %s is up and owns the vPort: run 'ip link set %s "
                 "down'",
                 priv.port_id, priv.ifname, priv.ifname);
  else if (err == ENOMEM)
    MANA_DRV_LOG(ERR, "port %u (%s): cannot create %s: out of memory: reserve more hugepages",
                 priv.port_id, priv.ifname, what);
  else
    MANA_DRV_LOG(ERR, "port %u (%s): cannot create %s: %s", priv.port_id, priv.ifname, what,
                 strerror(err));
  return -err;
}

}  // namespace mana
