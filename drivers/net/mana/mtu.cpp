// SPDX-License-Identifier: BSD-3-Clause
// The vPort takes the MTU of its kernel netdev, which the kernel changes on a down port (the DPDK
// case) without touching queues (doc/hardware.md §2.9). RX buffers must hold a whole frame of the
// MTU (no scattered RX): rx_queue_setup checks new queues, mtu_set the ones set up already.
#include "mtu.h"

#include <cerrno>
#include <cstring>

#include <ethdev_driver.h>

#include "mana_log.h"
#include "netdev_mtu.h"
#include "port_owner.h"
#include "priv.h"
#include "recovery_state.h"

namespace mana {
namespace {

int write_mtu(rte_eth_dev* dev, uint16_t mtu) {
  const PortPriv* priv = priv_of(dev);
  const int rc = netdev_mtu_write(*priv, mtu);
  if (rc != 0)
    MANA_DRV_LOG(ERR,
                 "port %u: cannot set MTU %u on netdev %s (%s: %s; the kernel needs "
                 "CAP_NET_ADMIN and an MTU up to its max MTU %u)",
                 dev->data->port_id, mtu, priv->ifname, priv->mtu_path, strerror(-rc),
                 priv->max_mtu);
  return rc;
}

}  // namespace

int rx_queue_short_of(const rte_eth_dev* dev, uint16_t mtu) {
  for (uint16_t i = 0; i < dev->data->nb_rx_queues; i++) {
    // In data room (headroom included), as rx_queue_setup says it: one measure for both.
    const auto* q = rxq_of(dev, i);
    if (q != nullptr && q->buf_len + RTE_PKTMBUF_HEADROOM < rx_data_room_for(mtu)) return i;
  }
  return -1;
}

void mtu_warn_short_buffers(const rte_eth_dev* dev) {
  const uint16_t mtu = dev->data->mtu;
  const int i = rx_queue_short_of(dev, mtu);
  char owner[RTE_ETH_MAX_OWNER_NAME_LEN];
  if (i < 0 || !port_owner_name(dev->data->port_id, owner, sizeof(owner))) return;
  const auto* q = rxq_of(dev, i);
  MANA_DRV_LOG(WARNING,
               "port %u: MTU %u from the port's owner (%s) is taken although RX queue %u's "
               "buffers hold frames of up to %u bytes, not the MTU's %u (no scattered RX): "
               "longer frames are dropped and counted (xstat rx_cqe_truncated_errors); a pool "
               "with a data room of %u holds them (testpmd: --mbuf-size=%u)",
               dev->data->port_id, mtu, owner, i, q->buf_len, rx_frame_len(mtu),
               rx_data_room_for(mtu), rx_data_room_for(mtu));
}

int mtu_set(rte_eth_dev* dev, uint16_t mtu) {
  const PortPriv* priv = priv_of(dev);
  if (mtu < RTE_ETHER_MIN_MTU || mtu > priv->max_mtu) {
    MANA_DRV_LOG(ERR,
                 "port %u: MTU %u is not supported: the MTU must be %u..%u (the max MTU of "
                 "netdev %s, the adapter's)",
                 dev->data->port_id, mtu, RTE_ETHER_MIN_MTU, priv->max_mtu, priv->ifname);
    return -EINVAL;
  }
  // A port another driver owns takes it anyway (mtu_warn_short_buffers says so at its start).
  if (const int i = rx_queue_short_of(dev, mtu);
      i >= 0 && !owned_by_another_driver(dev->data->port_id)) {
    const auto* q = rxq_of(dev, i);
    const uint32_t needed = rx_data_room_for(mtu);
    MANA_DRV_LOG(ERR,
                 "port %u: MTU %u needs a mempool data room of %u bytes (MTU %u + %u, "
                 "max_rx_pktlen %u, + headroom %u; no scattered RX), RX queue %u's has %u: set "
                 "the queues up again with a pool of at least %u (testpmd: --mbuf-size=%u)",
                 dev->data->port_id, mtu, needed, mtu, kFrameOverhead, rx_frame_len(mtu),
                 RTE_PKTMBUF_HEADROOM, i, q->buf_len + RTE_PKTMBUF_HEADROOM, needed, needed);
    return -EINVAL;
  }
  // The VF is removed: its netdev is gone with it. ethdev keeps the MTU (dev->data->mtu), and the
  // recovery (or a reset) writes it to the netdev of the VF that comes back (mtu_apply).
  if (recovery_state(*priv) != Recovery::kNone) {
    MANA_DRV_LOG(NOTICE,
                 "port %u: the VF is removed: MTU %u is kept and goes to its netdev when the VF "
                 "is back (recovery or rte_eth_dev_reset)",
                 dev->data->port_id, mtu);
    return 0;
  }
  const int rc = write_mtu(dev, mtu);
  // The vPort takes its netdev's MTU when its queues configure it (doc/guide.md "MTU and jumbo
  // frames"): a started port keeps the old one on the NIC until it starts again.
  if (rc == 0 && dev->data->dev_started)
    MANA_DRV_LOG(NOTICE,
                 "port %u: MTU %u is set on netdev %s; the NIC may apply it only from the next "
                 "port start: stop and start the port",
                 dev->data->port_id, mtu, priv->ifname);
  return rc;
}

int mtu_apply(rte_eth_dev* dev) {
  const uint16_t mtu = dev->data->mtu;
  if (netdev_mtu_read(*priv_of(dev)) == mtu) return 0;
  return write_mtu(dev, mtu);
}

}  // namespace mana
