#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The fabric wire (Azure's vSwitch: delivery by destination IP, MAC rewrite, anti-spoofing) with
the command lines Azure's test suite and documentation use: txonly with --tx-ip and no --eth-peer.

LISA (microsoft/lisa, lisa/microsoft/testsuites/dpdk/dpdkutil.py generate_send_receive_run_info and
dpdktestpmd.py generate_testpmd_command, mirror commit 66df42e2) runs, for MANA with mana_ib:
  sender:   testpmd -l 1-2 --vdev="net_vdev_netvsc0,mac=<M>" --vdev="<pci>,mac=<M>"
            --log-level netvsc,debug -- --forward-mode=txonly -a --stats-period 2 --nb-cores=1
            --tx-ip=<sender ip>,<receiver ip> --txd=256 --rxd=256 --stats 2
  receiver: the same with --forward-mode=rxonly and without --tx-ip
(one queue: generate_send_receive_run_info's default; --txonly-multi-flow only for DPDK > 23.07).
"""

import json
import os

from emulator import device_counters, fabric_ports
import harness
from harness import MANA_EMU, PMD, Program, emu_ctl, emu_mac, expect
from launch import RECEIVER, SENDER
from testpmd_cli import parse_forward_stats, receiver_rx_packets

# Hugepages its DPDK processes take together at their peak (hugepages.py): two testpmd processes at once, measured 740 MB.
HUGEPAGES_MB = 1024



def lisa_testpmd(nic, fabric, prefix, mode_args):
    # Adapted from LISA's line, only where this machine differs: 2 cores (-l 0-1 instead of 1-2),
    # hugepage memory kept small and separate per process (--file-prefix, -m 256, --huge-unlink),
    # and the driver loaded as a plugin (-d: Debian's DPDK has no net_mana).
    eal = ["-l", "0-1", "--vdev", f"net_vdev_netvsc0,mac={nic['mac']}",
           "--vdev", f"{nic['pci']},mac={nic['mac']}", "--log-level", "netvsc,debug",
           "--file-prefix", prefix, "--huge-unlink", "-d", PMD]
    testpmd = ["--", *mode_args[:1], "-a", "--stats-period", "2", "--nb-cores=1", *mode_args[1:],
               "--txd=256", "--rxd=256", "--stats", "2"]
    return Program([MANA_EMU, "run", "--vf", nic["pci"], "--mac", nic["mac"], "--ip", nic["ip"],
                    "--wire", f"fabric:{fabric}", "--", "dpdk-testpmd", *eal, *testpmd])


def expect_fabric_released(name, program):
    """Once every process on a fabric has exited, mana-emu has removed its shared-memory object."""
    path = f"/dev/shm/mana-emu-fabric-{name}"
    expect(not os.path.exists(path), f"{path} left behind after every port's process exited", program)


def test_lisa_send_receive_two_processes():
    fabric = f"lisa-{os.getpid()}"
    rcv = lisa_testpmd(RECEIVER, fabric, "mana-lisa-rcv", ["--forward-mode=rxonly"])
    rcv.wait_for(r"rxonly packet forwarding", timeout=60)
    snd = lisa_testpmd(SENDER, fabric, "mana-lisa-snd",
                       ["--forward-mode=txonly", f"--tx-ip={SENDER['ip']},{RECEIVER['ip']}"])
    snd.wait_for(r"txonly packet forwarding", timeout=60)
    # Some traffic first: each stats block (every 2 s) is one step of this wait.
    blocks = [(0, 0)]
    harness.repeat_until(lambda: blocks.append(receiver_rx_packets(rcv, blocks[-1][1])) or blocks[-1][0],
                         lambda rx: rx >= 200000, "the receiver to count 200000 packets")
    expect(snd.stop() == 0, "sender failed", snd)
    sent = parse_forward_stats(snd.output())[0]["TX-packets"]
    expect(sent >= 200000, f"sender sent only {sent}", snd)
    # The receiver must count every frame the sender handed to its driver: wait until its counter
    # reaches that number or stops moving (two equal stats blocks in a row, 2 s apart).
    harness.repeat_until(lambda: blocks.append(receiver_rx_packets(rcv, blocks[-1][1])) or
                         (blocks[-2][0], blocks[-1][0]),
                         lambda last: last[1] == sent or last[0] == last[1],
                         f"the receiver to count {sent} packets or stop counting")
    ports = fabric_ports(fabric)
    drops = emu_ctl(rcv, "counters", "0")
    expect(rcv.stop() == 0, "receiver failed", rcv)
    got = parse_forward_stats(rcv.output())[0]
    expect(got["RX-packets"] == sent, f"sender TX-packets {sent}, receiver RX-packets {got}", rcv)
    s = ports[SENDER["mac"]]
    expect(s["delivered"] == sent and all(s[k] == 0 for k in
           ("unknown_ip", "spoofed", "unroutable", "full_drops", "group_not_delivered")),
           f"fabric counters of the sender: {s}", rcv)
    counters = json.loads(drops.split(" ", 1)[1])
    port = counters["ports"][0]
    # A failure names which way frames went without a WQE: no RX steering yet, or a CQ without a CQ
    # doorbell (the RQ's cq_doorbell_violations); the fabric holds frames while the RQ is empty.
    expect(port["rx_no_wqe_drops"] == 0 and port["rx_filtered"] == 0 and port["rx_frames"] == sent,
           f"receiver's vPort: {port}; its RQs: {counters.get('rqs')}", rcv)
    expect_fabric_released(fabric, rcv)


def test_azure_txonly_tx_ip_between_two_ports_of_one_process():
    # Azure's documented line (dpdk-testpmd -l 1-3 --vdev="$BUS_INFO,mac=$MANA_MAC" --
    # --forward-mode=txonly --auto-start --txd=128 --rxd=128 --stats 2) with --tx-ip towards the
    # VF's second port and no --eth-peer: the frames go to the default peer MAC, the fabric
    # delivers them by IP. Port 1 is not started, so its vPort takes and drops them.
    fabric = f"azure-{os.getpid()}"
    p = Program([MANA_EMU, "run", "--ports", "2", "--wire", f"fabric:{fabric}", "--ip", "198.18.1.1",
                 "--ip", "198.18.1.2", "--", "dpdk-testpmd", "-l", "0-1",
                 f"--vdev={harness.EMU_BDF},mac={emu_mac(0)}", "--file-prefix", "mana-azure-fabric",
                 "--huge-unlink", "-d", PMD, "--", "--forward-mode=txonly",
                 "--auto-start", "--txd=128", "--rxd=128", "--stats", "2",
                 "--tx-ip=198.18.1.1,198.18.1.2"])
    p.wait_for(r"Tx-pps:\s+[1-9]", timeout=60)
    ports = fabric_ports(fabric)
    port1 = device_counters(p)["ports"][1]
    expect(p.stop() == 0, "testpmd failed", p)
    s = ports[emu_mac(0)]
    expect(s["delivered"] > 0 and s["unknown_ip"] == 0 and s["spoofed"] == 0,
           f"fabric counters of port 0: {s}", p)
    expect(port1["rx_frames"] > 0, f"port 1 got nothing from the fabric: {port1}", p)
    expect_fabric_released(fabric, p)


if __name__ == "__main__":
    harness.main([test_lisa_send_receive_two_processes,
                  test_azure_txonly_tx_ip_between_two_ports_of_one_process])
