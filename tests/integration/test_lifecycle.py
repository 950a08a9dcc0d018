#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ports stopped, started, reconfigured and closed many times lose nothing (mbufs back in the
mempool, every verbs object destroyed in the emulator, no doorbell for a missing queue), and each
failure a user can cause gives one clear line (kernel netdev still up, MAC not found)."""

import re

from emulator import device_counters, live
import harness
from harness import EMU_BDF, emu_mac, expect, testpmd_on_emu
from testpmd_cli import command, in_use, show_port_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool, measured 370 MB.
HUGEPAGES_MB = 512

CYCLES = 100


def test_stop_start_and_reconfigure_leak_nothing():
    # --disable-link-check: testpmd waits 100 ms on every `port stop` for the link it then reads
    # down (the port is stopped); 200 stops here, and the link is another test's.
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair"], "mana-cycles",
                       ["-i", "--forward-mode=io", "--rxq=1", "--txq=1", "--eth-peer=0,ff:ff:ff:ff:ff:ff",
                        "--eth-peer=1,ff:ff:ff:ff:ff:ff", "--disable-link-check"], interactive=True)
    p.wait_for(rf"Port 1: {emu_mac(1).upper()}")
    command(p, "port stop all")
    baseline = in_use(p)
    for i in range(CYCLES):
        command(p, "port start all")
        command(p, "port stop all")
    expect(in_use(p) == baseline, f"mbufs in use {in_use(p)} after {CYCLES} stop/start, baseline {baseline}", p)
    for i in range(CYCLES):
        q = (1, 2, 4, 8)[i % 4]
        command(p, f"port config all rxq {q}", done=None)
        command(p, f"port config all txq {q}", done=None)
        command(p, "port start all")
        if i % 10 == 0:  # some traffic through every configuration now and then
            command(p, "start tx_first", done=r"packet forwarding")
            command(p, "stop")
        command(p, "port stop all")
    expect(in_use(p) == baseline, f"mbufs in use {in_use(p)} after reconfiguring, baseline {baseline}", p)
    command(p, "port close all")
    alive = live(p)
    expect(all(v == 0 for v in alive.values()), f"emulator objects still alive after close: {alive}", p)
    # Every doorbell named a live queue, also those rung by the last burst before `port stop all`.
    counters = device_counters(p)
    expect(counters["bad_doorbells"] == 0,
           f"emulator counted {counters['bad_doorbells']} bad doorbells over the cycles", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_mempool_exhaustion_is_counted_and_loses_nothing():
    """A pool just larger than the RX ring: frames looping back find no fresh mbuf to refill with,
    the PMD drops them (counting RX-nombuf), keeps its ring whole, and every mbuf comes back."""
    # 1024 RX descriptors: a 2025 kernel with rdma-core >= 49 (libmana-max-wr=0).
    p = testpmd_on_emu(["--ports", "1", "--wire", "loop", "--limits", "2025", "--hw",
                        "libmana-max-wr=0"], "mana-nombuf",
                       ["-i", "--forward-mode=io", "--rxd=1024", "--txd=256", "--total-num-mbufs=1100",
                        "--mbcache=0", "--eth-peer=0,ff:ff:ff:ff:ff:ff"], interactive=True)
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    command(p, "port stop all")
    baseline = in_use(p)
    command(p, "port start all")
    command(p, "start tx_first 4", done=r"packet forwarding packets/burst=")
    harness.repeat_until(lambda: show_port_stats(p, last_port=0)[0].get("RX-nombuf", 0),
                         lambda nombuf: nombuf > 0, "RX-nombuf to be counted")
    command(p, "stop")
    command(p, "port stop all")
    expect(in_use(p) == baseline, f"mbufs in use {in_use(p)} after exhaustion, baseline {baseline}", p)
    command(p, "port start all")  # the port still works
    command(p, "port stop all")
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_netdev_up_is_named_with_the_fix():
    p = testpmd_on_emu(["--ports", "1", "--netdev-up", "0"], "mana-netdev-up",
                       ["--forward-mode=io", "--auto-start", "--stats-period", "1"])
    p.wait_for(r"kernel interface eth1 is up.*ip link set eth1 down")
    # testpmd goes on without the port (its start_port() reports the failure and returns 0).
    status = p.stop()
    expect(status == 0, f"testpmd exited {status} on SIGINT", p)


def test_rx_only_port_is_refused_with_the_fix():
    # The TX raw QP configures the vPort; without one the RSS QP of the RX queues cannot exist.
    p = testpmd_on_emu(["--ports", "1"], "mana-rxonly-port",
                       ["--forward-mode=rxonly", "--rxq=1", "--txq=0", "--auto-start"])
    p.wait_for(r"port 0: 0 TX queues: .*configure at least 1 TX queue")
    status = p.finish()
    expect(status == 1, f"testpmd exited {status}, expected 1 (its port refused)", p)


def test_mac_not_found_lists_the_macs():
    wrong = "00:11:22:33:44:55"
    p = testpmd_on_emu(["--ports", "2"], "mana-nomac", ["--stats-period", "1"],
                       eal_extra=["-a", f"{EMU_BDF},mac={wrong}"])
    m = p.wait_for(re.escape(wrong) + r".*", timeout=30)
    p.wait_for(r"(?i)" + re.escape(emu_mac(0)) + r".*" + re.escape(emu_mac(1)))
    expect(p.stop() == 0, "testpmd did not run on without the device", p)


if __name__ == "__main__":
    harness.main([test_stop_start_and_reconfigure_leak_nothing,
                  test_mempool_exhaustion_is_counted_and_loses_nothing, test_netdev_up_is_named_with_the_fix,
                  test_rx_only_port_is_refused_with_the_fix, test_mac_not_found_lists_the_macs])
