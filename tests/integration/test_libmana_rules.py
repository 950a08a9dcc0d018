#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Our driver, and DPDK 22.11's own net_mana, under rdma-core's later libmana CQ rules (mana-emu
--hw libmana-cq-rule=v44|v53|v62: a CQ created before the buffer allocators is refused or becomes
an RDMA CQ; cq_id is invalid until a QP uses the CQ) and under both kernels' RX steering teardown
(--hw rx-steering-on-destroy=clear|keep): a port stopped while frames keep arriving, then started
again, receives again (doc/hardware.md §9.21, §9.22). The emulated device lives in the process
that runs the VF, so the restart is within one testpmd, not across two."""

import crosscheck
import harness
from emulator import device_port
from harness import emu_hw, emu_mac, expect, testpmd_on_emu
from launch import PAIR_PEERS
from tap_peer import bring_up
from testpmd_cli import FORWARDING_STARTED, command, show_port_stats

from scapy.all import IP, UDP, Ether, Raw, conf, sendp  # noqa: E402

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool (l3fwd in the crosscheck runs takes less), measured 370 MB.
HUGEPAGES_MB = 512

conf.verb = 0
RULES = ("v44", "v53", "v62")


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
    """DPDK 22.11's net_mana (built unmodified) sets the allocators at configure and before each CQ
    and calls manadv_init_obj after its QPs: rdma-core 53's and 62's rules do not affect it. Its
    own crosscheck test (l3fwd between two TAP wires), run under each rule."""
    for rule in RULES:
        crosscheck.in_own_process("test_upstream_crosscheck.py",
                                  "test_upstream_net_mana_forwards_on_the_emulator",
                                  overrides=["--hw", f"libmana-cq-rule={rule}"])()


def frames_to_port(count, tag):
    return [Ether(src="02:00:00:00:00:01", dst=emu_mac(0))
            / IP(src=f"198.18.0.{1 + i % 200}", dst="198.18.1.7") / UDP(sport=1000 + i, dport=9)
            / Raw(b"%s%04d" % (tag, i)) for i in range(count)]


def rx_packets(p):
    return show_port_stats(p, last_port=0).get(0, {}).get("RX-packets", 0)


def restart_with_frames_arriving(mode, tap):
    """rxonly on one port of a TAP wire: frames while the port runs, while it is stopped (its RSS QP
    destroyed), and after it started again. Returns the vPort's counters at the end."""
    p = testpmd_on_emu(["--ports", "1", "--wire", f"tap:{tap}", "--hw",
                        f"rx-steering-on-destroy={mode}"], f"mana-steer-{mode}",
                       ["-i", "--nb-cores=1", "--forward-mode=rxonly"], interactive=True)
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}", timeout=60)
    bring_up(tap)
    command(p, "start", done=FORWARDING_STARTED)
    sendp(frames_to_port(100, b"run"), iface=tap)
    harness.repeat_until(lambda: rx_packets(p), lambda n: n >= 100, "100 frames received",
                         timeout=60)
    command(p, "stop")
    command(p, "port stop 0")
    before = device_port(p)
    sendp(frames_to_port(200, b"stp"), iface=tap)
    lost = "rx_stale_steering_drops" if mode == "keep" else "rx_no_wqe_drops"
    harness.repeat_until(lambda: device_port(p)[lost], lambda n: n >= before[lost] + 200,
                         f"the 200 frames for the stopped port counted as {lost}", timeout=60)
    stopped = device_port(p)
    command(p, "port start 0")
    command(p, "start", done=FORWARDING_STARTED)
    base = rx_packets(p)
    sendp(frames_to_port(100, b"new"), iface=tap)
    harness.repeat_until(lambda: rx_packets(p), lambda n: n >= base + 100,
                         "the restarted port to receive the 100 new frames", timeout=60)
    after = device_port(p)
    # The new RSS QP programmed steering: nothing more went astray.
    for key in ("rx_stale_steering_drops", "rx_stale_steering_cqes"):
        expect(after[key] == stopped[key], f"{key} grew after the restart: {stopped} -> {after}", p)
    command(p, "stop")
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)
    print(f"rx-steering-on-destroy={mode}: vPort counters {after}", flush=True)
    return after


def test_restart_receives_again_on_a_fixed_kernel():
    counters = restart_with_frames_arriving("clear", "mxsteer0")
    expect(counters["rx_stale_steering_drops"] == 0 and counters["rx_stale_steering_cqes"] == 0,
           f"stale steering on a kernel with the fix: {counters}")


def test_restart_receives_again_on_a_kernel_without_the_fix():
    """Frames for the stopped port are lost to the steering the destroyed RSS QP left (not counted
    as no-WQE drops: the vPort still steers them); the new RSS QP programs steering again. Frames
    that arrive between the new TX CQ (which may take a stale CQ id) and the new RSS QP complete on
    that TX CQ, which the driver skips as misdirected (tx_reclaim.cpp; the device-level sequence is
    tests/unit/emu_device steering_teardown_test.cpp)."""
    counters = restart_with_frames_arriving("keep", "mxsteer1")
    expect(counters["rx_stale_steering_drops"] >= 200,
           f"frames not lost to stale steering: {counters}")


if __name__ == "__main__":
    harness.main([test_our_driver_forwards_under_each_libmana_rule,
                  test_upstream_net_mana_forwards_under_each_libmana_rule,
                  test_restart_receives_again_on_a_fixed_kernel,
                  test_restart_receives_again_on_a_kernel_without_the_fix])
