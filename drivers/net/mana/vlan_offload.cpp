// SPDX-License-Identifier: BSD-3-Clause
#include "vlan_offload.h"

#include "burst.h"
#include "mana_log.h"
#include "mp.h"
#include "priv.h"
#include "recovery.h"

namespace mana {

int vlan_offload_set(rte_eth_dev* dev, int mask) {
  if (!(mask & RTE_ETH_VLAN_STRIP_MASK)) return 0;
  const bool strip = dev->data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
  recovery_control_begin(dev);  // the port is not started or stopped meanwhile
  if (priv_of(dev)->started) {
    // A burst running on the old variant finishes with the old meaning; the next takes the new.
    const eth_rx_burst_t burst = select_rx_burst(dev->data->dev_conf.rxmode.offloads);
    dev->rx_pkt_burst = burst;
    __atomic_store_n(&rte_eth_fp_ops[dev->data->port_id].rx_pkt_burst, burst, __ATOMIC_RELEASE);
    mp_notify_secondaries_start(dev);
  }
  recovery_control_end(dev);
  MANA_DRV_LOG(INFO, "port %u: VLAN stripping %s", dev->data->port_id, strip ? "on" : "off");
  return 0;
}

}  // namespace mana
