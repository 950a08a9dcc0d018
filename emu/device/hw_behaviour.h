// SPDX-License-Identifier: BSD-3-Clause
// Hardware and kernel behaviours that the public record leaves open, one field each. The emulator
// implements every plausible choice so that a driver can be tested against all of them; named
// profiles bundle them (emu/config/hw_options.h). doc/hardware.md, "Open behaviours", gives the
// evidence for each row and what our driver does about it.
#pragma once

#include <cerrno>
#include <cstdint>

namespace mana::emu {

struct HwBehaviour {
  // How the NIC reports the RX hash type in a CQE: the one NDIS bit of the hash it computed, or the
  // composite L3 (0x049) / L4 (0x1B6) masks that DPDK's net_mana compares against.
  enum class HashType : uint8_t { kOneBit, kMask };
  // What the device does when a CQ went 8 wraps without a CQ doorbell (mana_en.c's rule).
  enum class CqDoorbellRule : uint8_t { kOff, kStall, kError };
  // RX frames longer than the vPort MTU allows.
  enum class RxOversize : uint8_t { kDrop, kTruncate, kDeliver };
  // The unit of a TX CQE's tx_wqe_offset: the WQE's position in basic units (as mana_ib compares
  // it), or in bytes (as the RX CQE's rx_wqe_offset is).
  enum class TxWqeOffset : uint8_t { kBasicUnits, kBytes };

  // An RSS QP needs a raw QP on the same PD and port first (EINVAL otherwise): the raw QP is what
  // configures the vPort in recent kernels.
  bool raw_qp_first = true;
  // The IP-checksum-ok/fail CQE bits are also set for IPv6 frames.
  bool ipv6_ip_csum = true;
  HashType hash_type = HashType::kOneBit;
  // Every Nth RX completion is preceded by one whose first packet entry has length 0 and that
  // consumed no RQ WQE (0: never).
  uint32_t zero_length_cqe_every = 0;
  CqDoorbellRule cq_doorbell = CqDoorbellRule::kOff;
  // TX vPort offset of the VF's first port (the others follow); 0: a small offset chosen per run.
  // Offsets above 255 need the long TX OOB's 12-bit field.
  uint32_t vport_offset = 0;
  // WR/CQE limit of the user-space provider library (rdma-core 44..48: 256), whatever the kernel
  // reports; 0: no limit of its own (rdma-core >= 49).
  uint32_t libmana_max_wr = 256;
  // errno of raw-QP creation when the vPort is taken (kernel netdev up or another PD).
  int vport_busy_errno = ENODEV;
  // Raw/RSS CQs are attached to an EQ, so armed CQs signal their completion channel. 6.2-era
  // kernels create them without one: RX interrupts never fire.
  bool cq_eq = true;
  RxOversize rx_oversize = RxOversize::kDrop;
  // A one-entry indirection table still hashes (true) or the kernel disables RSS for it, so CQEs
  // carry no hash type (false).
  bool single_queue_hash = false;
  TxWqeOffset tx_wqe_offset = TxWqeOffset::kBasicUnits;
  // The adapter's MTU as its kernel netdev shows it (max_mtu = the kernel's adapter_mtu - 14): the
  // largest MTU a port may take. 9000 with jumbo frames (Linux >= 6.4), 1500 before.
  uint32_t adapter_mtu = 9000;
  // Which MTU the vPort enforces (doc/hardware.md §9.11, open): its netdev's (false) or the
  // adapter's, whatever the netdev says (true).
  bool vport_mtu_adapter = false;
  // TSO: the IPv4 id of segment i is the header's + i (false), or the header's in every segment.
  bool tso_fixed_ip_id = false;
  // A VLAN tag to insert into a frame whose data already carries one: refused with
  // CQE_TX_VLAN_TAGGING_VIOLATION (true), or inserted as a second, outer tag (false).
  bool tx_vlan_refuse_tagged = true;

  // The synthetic NIC's host (emu/netvsc, doc/hardware.md §11): whether it completes the guest's
  // SET_DATAPATH (as requested by the packet's flag, never, always), when it first announces the
  // VF (once RNDIS is initialized, or once the guest set a packet filter), and whether group
  // frames stay on the synthetic path while the data path is on the VF.
  enum class NetvscCompletion : uint8_t { kAsRequested, kNever, kAlways };
  NetvscCompletion netvsc_datapath_completion = NetvscCompletion::kAsRequested;
  bool netvsc_vfassoc_at_filter = false;
  bool netvsc_group_frames_vf = false;

  // ---- rdma-core's libmana CQ rules and the kernel's RX steering teardown (doc/hardware.md
  // §9.21, §9.22).
  // What the emulated libmana does with a CQ created before manadv_set_context_attr gave it the
  // application's buffer allocators, and what manadv_init_obj reports as a CQ's id before a QP
  // uses it: v44 (rdma-core 44..52) refuses such a CQ (EINVAL) and reports 0; v53 (e3ddaeb62,
  // rdma-core 53..61) makes it an RDMA (RNIC) CQ in libmana's own memory, which a raw or RSS QP
  // then refuses (EPROTO), and still reports 0; v62 (a09db86ec) as v53, and an Ethernet CQ's id is
  // UINT32_MAX until a raw or RSS QP assigns it.
  enum class LibmanaCqRule : uint8_t { kV44, kV53, kV62 };
  LibmanaCqRule libmana_cq_rule = LibmanaCqRule::kV44;
  // Destroying an RSS QP leaves the vPort's RX steering at the destroyed queues (kernels without
  // dbeb256e8dd8): frames that arrive are lost, or completed on a CQ that reuses a stale CQ id,
  // until the next RSS QP (or the kernel netdev) programs steering again. False: the kernel
  // disables steering first.
  bool rx_steering_keep = false;
  // ---- The port's link as the kernel netdev shows it (doc/hardware.md §9.24) ----
  // What the VF netdev's sysfs `speed` (and ethtool) reports, in Mbit/s: since Linux 6.17 the
  // VM's bandwidth as the NIC reports it (MANA_QUERY_LINK_CONFIG); -1 = unknown, as kernels
  // before it (and NICs that do not answer the query) show it.
  int32_t link_speed_mbps = 25000;
  // What the VF netdev's carrier flag follows. True (Linux 6.19 and later, 54133f9b4b53): on from
  // probe, turned off and on by the NIC's link events (`mana-emu ctl link`), whether the netdev is
  // up or down. False (before): on while the netdev is up (mana_open), off once it was closed
  // (mana_detach), and no link events.
  bool link_events = true;
  // ---- A hot-added VF's netdev (doc/hardware.md §9.25) ----
  // On `mana-emu ctl add`, the VF's netdevs appear this many ms after its PCI function (and its
  // RDMA devices after them): the kernel's mana driver can take more than 100 s to register them
  // after a PCI rescan (DPDK 03d66f18dd). 0: together with the function.
  uint32_t netdev_delay_ms = 0;
  // Each netdev first appears under the kernel's name (the lowest free eth<k>) and udev gives it
  // its configured name this many ms later (DPDK fdd4238fd0); its RDMA device comes after the
  // rename. 0: it appears under its configured name.
  uint32_t netdev_rename_ms = 0;
  // ---- A removal's fatal event (doc/hardware.md §2.7) ----
  // On `mana-emu ctl remove`, IBV_EVENT_DEVICE_FATAL reaches the contexts' async fds this many ms
  // after they were disassociated (their creates already answer EIO): the time a program's
  // interrupt thread takes to read it, when it is busy. 0: with the disassociation.
  uint32_t fatal_event_delay_ms = 0;
};

}  // namespace mana::emu
