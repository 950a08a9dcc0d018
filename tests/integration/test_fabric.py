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
import signal
import time

from emulator import device_counters, fabric_ports
import harness
from harness import MANA_EMU, PMD, Program, emu_ctl, emu_mac, expect
from launch import RECEIVER, SENDER
from testpmd_cli import FORWARDING_STARTED, ReceiverCounts, parse_forward_stats

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


def lisa_pair(fabric, tag):
    """LISA's receiver, then its sender, both forwarding; the receiver's stats blocks."""
    rcv = lisa_testpmd(RECEIVER, fabric, f"mana-{tag}-rcv", ["--forward-mode=rxonly"])
    rcv.wait_for(FORWARDING_STARTED, timeout=60)  # after its RX drain: the sender may start
    snd = lisa_testpmd(SENDER, fabric, f"mana-{tag}-snd",
                       ["--forward-mode=txonly", f"--tx-ip={SENDER['ip']},{RECEIVER['ip']}"])
    snd.wait_for(r"txonly packet forwarding", timeout=60)
    return rcv, snd, ReceiverCounts(rcv)


def stop_sender(snd, counts):
    """Stops the sender; returns its TX-packets once the receiver counted them all (or stopped
    counting: the caller compares)."""
    expect(snd.stop() == 0, "sender failed", snd)
    sent = parse_forward_stats(snd.output())[0]["TX-packets"]
    counts.wait_for_all(sent)
    return sent


def test_lisa_send_receive_two_processes():
    fabric = f"lisa-{os.getpid()}"
    rcv, snd, counts = lisa_pair(fabric, "lisa")
    # Some traffic first: each stats block (every 2 s) is one step of this wait.
    counts.wait_for(200000)
    # The receiver must count every frame the sender handed to its driver.
    sent = stop_sender(snd, counts)
    expect(sent >= 200000, f"sender sent only {sent}", snd)
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


def test_a_receiver_not_scheduled_past_the_stall_limit_loses_nothing():
    # A loaded machine (or a paused VM) may not run the receiving process for longer than the
    # fabric's stall limit (1 s): the fabric holds the sender back while the receiver does not
    # poll, so no frame is dropped and the counts stay exact (doc/emulator.md, the fabric wire).
    fabric = f"pause-{os.getpid()}"
    rcv, snd, counts = lisa_pair(fabric, "pause")
    counts.wait_for(1)
    pids = harness.command_pids(rcv)
    expect(len(pids) == 1, f"the receiver's testpmd: processes {pids}", rcv)
    os.kill(pids[0], signal.SIGSTOP)
    try:
        delivered = [-1]
        harness.repeat_until(
            lambda: delivered.append(fabric_ports(fabric)[SENDER["mac"]]["delivered"]) or
            delivered[-2:], lambda last: last[0] == last[1],
            "the sender's frames to stop reaching the stopped receiver (its ring full)", timeout=30)
        time.sleep(1.5)  # the scenario itself: the receiver stays unscheduled past the stall limit
    finally:
        os.kill(pids[0], signal.SIGCONT)
    held = fabric_ports(fabric)[SENDER["mac"]]
    expect(held["full_drops"] == 0, f"the sender dropped while the receiver was stopped: {held}",
           rcv)
    sent = stop_sender(snd, counts)
    ports = fabric_ports(fabric)
    expect(rcv.stop() == 0, "receiver failed", rcv)
    got = parse_forward_stats(rcv.output())[0]
    s = ports[SENDER["mac"]]
    expect(got["RX-packets"] == sent and s["delivered"] == sent and s["full_drops"] == 0,
           f"sender TX-packets {sent}, receiver RX-packets {got['RX-packets']}, fabric {s}", rcv)


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
                  test_a_receiver_not_scheduled_past_the_stall_limit_loses_nothing,
                  test_azure_txonly_tx_ip_between_two_ports_of_one_process])
