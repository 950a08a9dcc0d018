#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Our driver, and DPDK 22.11's own net_mana, under rdma-core's later libmana CQ rules (mana-emu
--hw libmana-cq-rule=v44|v53|v62: a CQ created before the buffer allocators is refused or becomes
an RDMA CQ; cq_id is invalid until a QP uses the CQ) and under both kernels' RX steering teardown
(--hw rx-steering-on-destroy=clear|keep): a port stopped while a peer keeps sending, then started
again, receives again (doc/hardware.md §9.21, §9.22)."""

import os
import subprocess
from pathlib import Path

import harness
from emulator import device_port
from harness import MANA_EMU, PMD, TOP, Program, emu_hw, emu_mac, expect, testpmd_on_emu
from launch import PAIR_PEERS, RECEIVER, SENDER
from testpmd_cli import command, show_port_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): two testpmd processes at once (sender and receiver), as test_fabric.py, measured 740 MB.
HUGEPAGES_MB = 1024

RULES = ("v44", "v53", "v62")


def upstream_pmd():
    """DPDK 22.11.11's net_mana built unmodified (scripts/build-upstream-mana.sh, cached)."""
    out = subprocess.run([str(TOP / "scripts/build-upstream-mana.sh")], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise harness.Failure(f"build-upstream-mana.sh: {out.stderr}")
    return harness._loadable(Path(out.stdout.strip().splitlines()[-1]))


def forwards_under_rule(rule, pmd, prefix):
    """mac forwarding between two ports on a pair wire: both ports receive what the other sent."""
    opts = ["--ports", "2", "--wire", "pair", "--hw", f"libmana-cq-rule={rule}"]
    expect(emu_hw(opts)["libmana-cq-rule"] == rule, f"emulator not on rule {rule}")
    p = testpmd_on_emu(opts, prefix, ["-i", "--forward-mode=mac", "--rxq=1", "--txq=1",
                                      *PAIR_PEERS], interactive=True, pmd=pmd)
    p.wait_for(rf"Port 1: {emu_mac(1).upper()}", timeout=60)
    command(p, "start tx_first", done=r"packet forwarding")
    harness.repeat_until(lambda: show_port_stats(p), lambda s: min(
        s.get(i, {}).get("RX-packets", 0) for i in (0, 1)) >= 1000,
        f"both ports to receive 1000 frames under libmana-cq-rule={rule}", timeout=60)
    command(p, "stop")
    command(p, "port stop all")
    command(p, "port close all")
    p.send("quit")
    expect(p.finish() == 0, f"testpmd failed under libmana-cq-rule={rule}", p)


def test_our_driver_forwards_under_each_libmana_rule():
    """The driver sets the allocators before every CQ and reads queue ids after the QPs: nothing
    differs between the rules (a driver that created a CQ first would fail under v53 and v62:
    tests/unit/emu_verbs libmana_rules_test.cpp)."""
    for rule in RULES:
        forwards_under_rule(rule, None, f"mana-rule-{rule}")


def test_upstream_net_mana_forwards_under_each_libmana_rule():
    """DPDK 22.11's net_mana sets the allocators at configure and before each CQ and calls
    manadv_init_obj after its QPs: it is not affected by rdma-core 53's or 62's rule."""
    pmd = upstream_pmd()
    for rule in RULES:
        forwards_under_rule(rule, pmd, f"mana-up-rule-{rule}")


def fabric_testpmd(nic, fabric, prefix, emu_opts, testpmd_opts, interactive=False):
    """testpmd on one emulated NIC of fabric wire `fabric` (as test_fabric.py's, our driver)."""
    argv = [MANA_EMU, "run", "--vf", nic["pci"], "--mac", nic["mac"], "--ip", nic["ip"], "--wire",
            f"fabric:{fabric}", *emu_opts, "--", "dpdk-testpmd", "-l", "0-1", "-a", nic["pci"],
            "--file-prefix", prefix, "--huge-unlink", "-d", PMD, "--", *testpmd_opts]
    return Program(argv, stdin=subprocess.PIPE if interactive else subprocess.DEVNULL)


def rx_packets(p):
    return show_port_stats(p, last_port=0).get(0, {}).get("RX-packets", 0)


def restart_while_peer_sends(mode):
    """The receiver's port is stopped (its RSS QP destroyed) while the sender keeps sending to it,
    then started again. Returns the receiver's vPort counters after it received again."""
    fabric = f"steer-{mode}-{os.getpid()}"
    rcv = fabric_testpmd(RECEIVER, fabric, f"mana-steer-rcv-{mode}",
                         ["--hw", f"rx-steering-on-destroy={mode}"],
                         ["-i", "--forward-mode=rxonly"], interactive=True)
    rcv.wait_for(rf"Port 0: {RECEIVER['mac'].upper()}", timeout=60)
    command(rcv, "start", done=r"packet forwarding")
    snd = fabric_testpmd(SENDER, fabric, f"mana-steer-snd-{mode}", [],
                         ["--forward-mode=txonly", "-a", f"--tx-ip={SENDER['ip']},{RECEIVER['ip']}",
                          "--txd=256", "--rxd=256"])
    snd.wait_for(r"txonly packet forwarding", timeout=60)
    harness.repeat_until(lambda: rx_packets(rcv), lambda n: n >= 1000,
                         "the receiver to get 1000 frames", timeout=60)
    command(rcv, "stop")
    command(rcv, "port stop 0")
    before = device_port(rcv)
    lost = "rx_stale_steering_drops" if mode == "keep" else "rx_no_wqe_drops"
    harness.repeat_until(lambda: device_port(rcv)[lost], lambda n: n >= before[lost] + 100,
                         f"100 frames for the stopped port counted as {lost}", timeout=60)
    command(rcv, "port start 0")
    command(rcv, "start", done=r"packet forwarding")
    start = rx_packets(rcv)
    harness.repeat_until(lambda: rx_packets(rcv), lambda n: n >= start + 1000,
                         "the restarted port to receive 1000 frames more", timeout=60)
    after = device_port(rcv)
    # Once the new RSS QP programmed steering, no frame goes astray any more.
    harness.repeat_until(lambda: rx_packets(rcv), lambda n: n >= start + 2000,
                         "1000 frames more", timeout=60)
    settled = device_port(rcv)
    for key in ("rx_stale_steering_drops", "rx_stale_steering_cqes"):
        expect(settled[key] == after[key], f"{key} grew after the restart: {after} -> {settled}",
               rcv)
    expect(snd.stop() == 0, "sender failed", snd)
    command(rcv, "stop")
    rcv.send("quit")
    expect(rcv.finish() == 0, "receiver failed", rcv)
    print(f"rx-steering-on-destroy={mode}: receiver vPort counters {settled}", flush=True)
    return settled


def test_restart_receives_again_on_a_fixed_kernel():
    counters = restart_while_peer_sends("clear")
    expect(counters["rx_stale_steering_drops"] == 0 and counters["rx_stale_steering_cqes"] == 0,
           f"stale steering on a kernel with the fix: {counters}")


def test_restart_receives_again_on_a_kernel_without_the_fix():
    """Frames for the stopped port are lost to the steering the destroyed RSS QP left (not counted
    as no-WQE drops: the vPort still steers them); the next RSS QP programs steering again. Frames
    that arrive between the new TX CQ (which may take a stale CQ id) and the new RSS QP complete on
    that TX CQ, which the driver skips as misdirected (tx_reclaim.cpp; the device-level test is
    tests/unit/emu_device steering_teardown_test.cpp)."""
    counters = restart_while_peer_sends("keep")
    expect(counters["rx_stale_steering_drops"] >= 100, f"no frames lost to stale steering: {counters}")


if __name__ == "__main__":
    harness.main([test_our_driver_forwards_under_each_libmana_rule,
                  test_upstream_net_mana_forwards_under_each_libmana_rule,
                  test_restart_receives_again_on_a_fixed_kernel,
                  test_restart_receives_again_on_a_kernel_without_the_fix])
