#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""net_mana forwarding packets in Debian's dpdk-testpmd on the emulated MANA VF: every forwarding
mode, both doorbell modes, RX coalescing on and off, Azure's documented command lines, and per-port
counters that match exactly across a pair wire."""

import time

from emulator import device_counters, sq_packets
import harness
from harness import EMU_BDF, emu_mac, expect, testpmd_on_emu
from launch import PAIR_PEERS
from testpmd_cli import command, parse_forward_stats, show_port_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool, measured 370 MB.
HUGEPAGES_MB = 512


# The vPort delivers frames for the port's MAC, broadcast and multicast only (as on Azure).
# io/rxonly forward frames unchanged, so the frames testpmd injects are broadcast; mac, flowgen and
# txonly address each port's frames to the peer port's MAC.
BROADCAST_PEERS = ["--eth-peer=0,ff:ff:ff:ff:ff:ff", "--eth-peer=1,ff:ff:ff:ff:ff:ff"]


def wait_for_traffic(p, port, minimum=1000, timeout=60):
    """Waits for a periodic stats block in which `port` has received at least `minimum` packets."""
    def next_block():
        p.wait_for(r"NIC statistics for port %d" % port, timeout=timeout, start=len(p.lines))
        m = p.wait_for(r"RX-packets:\s+(\d+)", timeout=timeout, start=p.last_index)
        return int(m.group(1))
    return harness.repeat_until(next_block, lambda rx: rx >= minimum,
                                f"port {port} to receive {minimum} packets", timeout)


def forward(mode, emu_opts, prefix, extra=(), ports=(0, 1)):
    p = testpmd_on_emu(emu_opts, prefix, [f"--forward-mode={mode}", "--auto-start",
                                          "--stats-period", "1", *extra])
    for port in ports:
        p.wait_for(rf"Port {port}: {emu_mac(port).upper()}")
    return p


def check_io_pair(doorbell, coalesce):
    p = forward("io", ["--ports", "2", "--wire", "pair", "--doorbell", doorbell, "--coalesce",
                       coalesce], f"mana-io-{doorbell}-{coalesce}", ["--tx-first", *BROADCAST_PEERS])
    wait_for_traffic(p, 0)
    wait_for_traffic(p, 1)
    rc = p.stop()
    expect(rc == 0, f"testpmd exited {rc}", p)
    fwd = parse_forward_stats(p.output())
    for port in (0, 1):
        s = fwd.get(port, {})
        expect(s.get("RX-packets", 0) > 0 and s.get("TX-packets", 0) > 0, f"port {port}: {s}", p)
        expect(s.get("TX-dropped", 0) == 0 and s.get("RX-dropped", 0) == 0, f"port {port}: {s}", p)


def test_io_pair_trap_doorbells():
    check_io_pair("trap", "off")


def test_io_pair_poll_doorbells():
    check_io_pair("poll", "off")


def test_io_pair_rx_coalescing():
    check_io_pair("trap", "on")


def test_mac_mode_pair():
    """Both directions forward: each port receives (what the other port's lcore sends)."""
    p = forward("mac", ["--ports", "2", "--wire", "pair"], "mana-mac", ["--tx-first", *PAIR_PEERS])
    wait_for_traffic(p, 0)
    wait_for_traffic(p, 1)
    expect(p.stop() == 0, "testpmd failed", p)


def test_txonly_and_rxonly_across_pair():
    # txonly sends on both ports; the peers' RX is not polled, so the device drops what does not
    # fit in the RX rings: the test is that TX runs at rate and nothing errors.
    p = forward("txonly", ["--ports", "2", "--wire", "pair"], "mana-txonly", PAIR_PEERS)
    m = p.wait_for(r"Tx-pps:\s+([1-9]\d*)")
    expect(p.stop() == 0, "testpmd failed", p)
    fwd = parse_forward_stats(p.output())
    expect(all(fwd[q]["TX-packets"] > 0 for q in (0, 1)), f"{fwd}", p)
    p = forward("rxonly", ["--ports", "2", "--wire", "pair"], "mana-rxonly", ["--tx-first", *BROADCAST_PEERS])
    wait_for_traffic(p, 0, minimum=32)
    expect(p.stop() == 0, "testpmd failed", p)


def test_azure_single_queue_command_line():
    # seeds/004: dpdk-testpmd -l 1-3 --vdev="$BUS_INFO,mac=$MANA_MAC" -- --forward-mode=txonly
    #            --auto-start --txd=128 --rxd=128 --stats 2   (cores adapted to this 2-core machine)
    p = testpmd_on_emu([], "mana-azure-1q",
                       ["--forward-mode=txonly", "--auto-start", "--txd=128", "--rxd=128",
                        "--stats", "2"],
                       eal_extra=[f"--vdev={EMU_BDF},mac={emu_mac(0)}"])
    p.wait_for(r"Tx-pps:\s+([1-9]\d*)", timeout=60)
    expect(p.stop() == 0, "testpmd failed", p)


def check_every_sq_sends(prefix, queues):
    """Azure's multi-queue txonly line with `queues` RX and TX queues: every one of the SQs
    completes packets (the emulator's per-SQ count), not just the port."""
    p = testpmd_on_emu([], prefix,
                       ["--forward-mode=txonly", "--auto-start", "--nb-cores=1", "--txd=128",
                        "--rxd=128", f"--txq={queues}", f"--rxq={queues}", "--stats", "2"],
                       eal_extra=[f"--vdev={EMU_BDF},mac={emu_mac(0)}"])
    p.wait_for(r"Tx-pps:\s+([1-9]\d*)", timeout=60)
    first = harness.repeat_until(lambda: sq_packets(p), lambda v: len(v) == queues,
                                 f"{queues} live SQs", timeout=30)
    harness.repeat_until(lambda: (time.sleep(0.2), sq_packets(p))[1],
                         lambda v: v.keys() == first.keys() and all(v[q] > first[q] for q in v),
                         f"every one of the {queues} SQs sending", timeout=60)
    expect(p.stop() == 0, "testpmd failed", p)


def test_azure_multi_queue_command_line():
    # seeds/004: ... --nb-cores=4 --txd=128 --rxd=128 --txq=8 --rxq=8 --stats 2 (1 core here)
    check_every_sq_sends("mana-azure-8q", 8)


def test_sixteen_queues_per_port():
    """16 RX and 16 TX queues on one port: the kernel netdev's default queue count since 2026
    (doc/hardware.md §9.24), which an application may well copy."""
    check_every_sq_sends("mana-16q", 16)


def test_2025_kernel_device_split_large_rings_coalescing():
    # The Ethernet device (manae_0) must be chosen over the RNIC one (mana_0) of the same function.
    # 2048 descriptors need rdma-core >= 49 (libmana-max-wr=0): rdma-core 44 allows 256.
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair", "--device-split", "--limits", "2025",
                        "--hw", "libmana-max-wr=0", "--coalesce", "on"], "mana-2025",
                       ["--forward-mode=mac", "--auto-start", "--stats-period", "1", "--tx-first",
                        "--txd=2048", "--rxd=2048", *PAIR_PEERS],
                       eal_extra=["-a", EMU_BDF, "--log-level=pmd.net.mana.init:info"])
    p.wait_for(r"skipping RDMA device mana_0 \(vendor part 3\)")
    p.wait_for(r"on RDMA device manae_0 port 2")
    wait_for_traffic(p, 0)
    wait_for_traffic(p, 1)
    expect(p.stop() == 0, "testpmd failed", p)
    expect("RX desc=2048" in p.output(), "not running with 2048 descriptors", p)


def test_pair_counters_match_exactly():
    # mac forwarding keeps a constant number of frames in flight (those of tx_first), fewer than the
    # RX rings hold, so the device never drops; a final rxonly pass drains the rings.
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair"], "mana-exact",
                       ["-i", "--forward-mode=mac", "--txd=256", "--rxd=256", *PAIR_PEERS],
                       interactive=True)
    p.wait_for(rf"Port 1: {emu_mac(1).upper()}")
    p.send("start tx_first 4")
    # Let traffic run until both ports have received a good amount.
    harness.repeat_until(lambda: show_port_stats(p),
                         lambda s: all(s[q].get("RX-packets", 0) > 200000 for q in (0, 1)),
                         "both ports to receive 200000 packets")
    command(p, "stop", r"Done\.")
    # Drain what is still in the RX rings, until the counters stop moving.
    p.send("set fwd rxonly")
    command(p, "start", r"^Logical Core")
    seen = []
    harness.repeat_until(lambda: seen.append(show_port_stats(p)) or seen[-2:],
                         lambda last: len(last) == 2 and last[0] == last[1],
                         "the port counters to stop moving")
    command(p, "stop", r"Done\.")
    s = show_port_stats(p)
    device = device_counters(p)  # printed on a mismatch: which drop took the frames
    p.send("quit")
    rc = p.finish()
    expect(rc == 0, f"testpmd exited {rc}", p)
    for tx, rx in ((0, 1), (1, 0)):
        expect(s[tx]["TX-packets"] == s[rx]["RX-packets"],
               f"port {tx} sent {s[tx]['TX-packets']} but port {rx} received {s[rx]['RX-packets']}"
               f"; the device's counters: {device}", p)
        expect(s[tx]["TX-bytes"] == s[rx]["RX-bytes"],
               f"port {tx} sent {s[tx]['TX-bytes']} bytes, port {rx} got {s[rx]['RX-bytes']}", p)
        expect(s[tx]["TX-packets"] > 200000, f"port {tx} sent only {s[tx]['TX-packets']}", p)
    for port in (0, 1):
        for key in ("RX-errors", "TX-errors", "RX-nombuf", "RX-missed"):
            expect(s[port].get(key, 0) == 0, f"port {port} {key}: {s[port]}", p)


if __name__ == "__main__":
    harness.main([test_io_pair_trap_doorbells, test_io_pair_poll_doorbells,
                  test_io_pair_rx_coalescing, test_mac_mode_pair, test_txonly_and_rxonly_across_pair,
                  test_azure_single_queue_command_line, test_azure_multi_queue_command_line,
                  test_sixteen_queues_per_port,
                  test_2025_kernel_device_split_large_rings_coalescing,
                  test_pair_counters_match_exactly])
