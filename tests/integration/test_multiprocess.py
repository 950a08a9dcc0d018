#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Other DPDK processes next to a primary testpmd on the emulator: dpdk-proc-info as a secondary
process (attaching to net_mana's ports, reading stats and xstats), dpdk-telemetry.py querying the
primary, two primaries joined by an shm wire, and hot removal of the VF (removal event)."""

import json
import os
import re
import subprocess

from emulator import device_counters
import harness
from harness import (EMU_BDF, Program, emu_ctl, emu_run, emulated_env, expect, pmd_args,
                     testpmd_on_emu)
from launch import PAIR_PEERS, PRIMARY_LCORES, SECONDARY_LCORES
from testpmd_cli import command, parse_forward_stats, parse_port_stats, show_port_stats, xstats

# Hugepages its DPDK processes take together at their peak (hugepages.py): two primaries at once, measured 722 MB.
HUGEPAGES_MB = 1024



def forwarding_primary(prefix):
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair"], prefix,
                       ["--forward-mode=mac", "--auto-start", "--tx-first", "--stats-period", "1",
                        *PAIR_PEERS], secondaries=True, lcores=PRIMARY_LCORES)
    p.wait_for(r"Rx-pps:\s+[1-9]")
    return p


def proc_info(p, prefix, *what):
    out = subprocess.run(["dpdk-proc-info", "--file-prefix", prefix, *pmd_args(), "-a", EMU_BDF,
                          "--", *what], capture_output=True, text=True, timeout=60,
                         env={**os.environ, **emulated_env(p)})
    expect(out.returncode == 0, f"dpdk-proc-info {what} failed ({out.returncode}): {out.stdout}{out.stderr}", p)
    expect("mana-emu:" not in out.stderr, f"emulator complained: {out.stderr}", p)
    return out.stdout


def test_proc_info_secondary_reads_stats():
    p = forwarding_primary("mana-mp")
    text = proc_info(p, "mana-mp", "--stats")
    stats = parse_port_stats(text.replace("NIC statistics for port", "#### NIC statistics for port"))
    expect(all(stats.get(q, {}).get("RX-packets", 0) > 0 for q in (0, 1)),
           f"secondary saw no traffic: {text[-3000:]}", p)
    text = proc_info(p, "mana-mp", "--xstats")
    expect(re.search(r"rx_q0_packets: [1-9]", text) and "tx_cqe_invalid_oob_errors" in text,
           f"xstats missing: {text[-3000:]}", p)
    expect(p.stop() == 0, "primary failed", p)


def error_xstats(p, port):
    """The non-zero error counters (error completions, drops) among a port's xstats."""
    return {k: v for k, v in xstats(p, port).items() if re.search(r"errors|drop|nombuf", k) and v != 0}


def test_secondary_process_forwards_its_own_queues():
    """testpmd's symmetric multi-process mode: the primary forwards queue 0 of both ports, a
    secondary testpmd queue 1 (its own burst calls, doorbells through the primary's doorbell page,
    its own mempool cache lcores, its own mempool registered by the primary). Then both drain
    their queues in rxonly mode: every frame sent was received, exactly, with no error completion
    and no drop anywhere."""
    common = ["-i", "--forward-mode=mac", "--rxq=2", "--txq=2", "--num-procs=2",
              "--txonly-multi-flow", *PAIR_PEERS]
    primary = testpmd_on_emu(["--ports", "2", "--wire", "pair"], "mana-smp", [*common, "--proc-id=0"],
                             eal_extra=["-a", EMU_BDF, "--proc-type=primary"], secondaries=True,
                             interactive=True, lcores=PRIMARY_LCORES)
    primary.wait_for(r"^Done")
    secondary = Program(["dpdk-testpmd", "--lcores", SECONDARY_LCORES, "--file-prefix", "mana-smp",
                         "--proc-type=secondary", *pmd_args(), "-a", EMU_BDF, "--", *common,
                         "--proc-id=1"], env=emulated_env(primary), stdin=subprocess.PIPE)
    secondary.wait_for(r"^Done")
    procs = (primary, secondary)
    for p in procs:
        command(p, "start tx_first", r"^Logical Core")
    # mac forwarding over a pair wire keeps a fixed number of frames circling in each direction:
    # the 32 frames (testpmd's burst) `start tx_first` sends on each port from each process, 64 per
    # direction. With 256 WQEs a queue, a driver that reposts every buffer it receives before it
    # sends the frames on leaves no RQ without a posted WQE, so the device must drop none (a
    # no-WQE drop is counted by the device, without a completion). Before the emulator kept the
    # order of doorbells across contexts (doc/hardware.md §4.8), such drops made a direction die
    # out now and then; now any drop fails the test.
    def device_ports():
        return device_counters(primary)["ports"]

    def enough(s):
        drops = {q: device_ports()[q]["rx_no_wqe_drops"] for q in (0, 1)}
        expect(drops == {0: 0, 1: 0}, f"no-WQE drops while forwarding: {drops}", primary)
        return all(s[q].get("RX-packets", 0) > 2000000 for q in (0, 1))

    harness.repeat_until(lambda: show_port_stats(primary), enough,
                         "both ports to receive 2000000 packets")
    for p in procs:
        command(p, "stop", r"^Done\.")
    fwd = parse_forward_stats(secondary.output())
    expect(all(fwd.get(q, {}).get("RX-packets", 0) > 0 and fwd.get(q, {}).get("TX-packets", 0) > 0
               for q in (0, 1)), f"the secondary's own streams: {fwd}", secondary)
    # Drain the RX rings of both processes: until the driver has received every frame the device
    # put into an RQ (a frame the driver lost keeps this from ever holding).
    for p in procs:
        p.send("set fwd rxonly")
        command(p, "start", r"^Logical Core")

    # The device's rx_frames counts every frame it took from the wire, the ones it then dropped
    # (no posted WQE, filtered, oversize: no completion written) included.
    def delivered(port):
        return (port["rx_frames"] - port["rx_no_wqe_drops"] - port["rx_filtered"] -
                port["rx_mtu_drops"])

    harness.repeat_until(lambda: (show_port_stats(primary), device_ports()),
                         lambda sd: all(sd[0][q]["RX-packets"] == delivered(sd[1][q])
                                        for q in (0, 1)),
                         "the driver to receive every frame the device delivered with a "
                         "completion", timeout=60)
    for p in procs:
        command(p, "stop", r"^Done\.")
    s = show_port_stats(primary)
    errors = {port: error_xstats(primary, port) for port in (0, 1)}
    device = device_ports()
    for p in procs[::-1]:
        p.send("quit")
        expect(p.finish() == 0, "testpmd failed", p)
    # Every frame sent was received, none dropped: even while one process still forwards and the
    # other no longer polls, its RQs hold the at most 64 frames of a direction.
    for tx, rx in ((0, 1), (1, 0)):
        sent = device[tx]["tx_frames"]
        if harness.SYSTEM_PMD:
            # DPDK's own net_mana counts a TX packet when it reaps its completion (tx.c), so the
            # last bursts' frames, completed but never reaped after the stop, are missing from its
            # count: at most the 2 queues x 256 descriptors of the port.
            expect(0 <= sent - s[tx]["TX-packets"] <= 2 * 256,
                   f"port {tx}: device sent {sent}, driver counted {s[tx]['TX-packets']}", primary)
        else:
            expect(sent == s[tx]["TX-packets"],
                   f"port {tx}: device sent {sent}, driver counted {s[tx]['TX-packets']}", primary)
        expect(sent == s[rx]["RX-packets"] and device[rx]["rx_no_wqe_drops"] == 0 and
               delivered(device[rx]) == s[rx]["RX-packets"] and
               device[tx]["tx_wire_drops"] == 0 and device[rx]["rx_filtered"] == 0,
               f"port {tx} sent {s[tx]}, port {rx} received {s[rx]}; device: {device}", primary)
        expect(harness.SYSTEM_PMD or s[tx]["TX-bytes"] == s[rx]["RX-bytes"],
               f"port {tx} sent {s[tx]['TX-bytes']} bytes, port {rx} got {s[rx]['RX-bytes']}",
               primary)
    expect(errors == {0: {}, 1: {}}, f"error counters: {errors}", primary)
    for p in procs:
        expect("mana-emu:" not in p.output(), "the emulator complained", p)


def test_telemetry_reports_port_stats():
    p = forwarding_primary("mana-tel")
    out = subprocess.run(["dpdk-telemetry.py", "-f", "mana-tel"], input="/ethdev/stats,0\n",
                         capture_output=True, text=True, timeout=60)
    expect(out.returncode == 0, f"dpdk-telemetry.py: {out.stdout}{out.stderr}", p)
    replies = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    stats = [r["/ethdev/stats"] for r in replies if "/ethdev/stats" in r]
    expect(stats and stats[-1]["ipackets"] > 0 and stats[-1]["ibytes"] > 0, f"{out.stdout}", p)
    # Per-queue basic stats (q_ipackets ...): one snapshot, so each port total is exactly its one
    # queue's count, and the queues the port does not have read 0. DPDK 25.11 took them out of
    # rte_eth_stats and of this reply ("ethdev: remove queue stats from basic stats structure"):
    # there, the driver's per-queue xstats must count the queue's traffic instead.
    s = stats[-1]
    if harness.DPDK_VERSION >= (25, 11):
        expect("q_ipackets" not in s, f"DPDK 25.11's /ethdev/stats has per-queue counters: {s}", p)
        out = subprocess.run(["dpdk-telemetry.py", "-f", "mana-tel"], input="/ethdev/xstats,0\n",
                             capture_output=True, text=True, timeout=60)
        replies = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        xstats = [r["/ethdev/xstats"] for r in replies if "/ethdev/xstats" in r]
        expect(xstats and all(xstats[-1].get(k, 0) > 0 for k in ("rx_q0_packets", "tx_q0_packets")),
               f"per-queue xstats: {out.stdout}", p)
    else:
        for total, per_queue in (("ipackets", "q_ipackets"), ("ibytes", "q_ibytes"),
                                 ("opackets", "q_opackets"), ("obytes", "q_obytes")):
            expect(s[per_queue][0] == s[total] and not any(s[per_queue][1:]),
                   f"{per_queue} {s[per_queue]} against {total} {s[total]}", p)
    expect(p.stop() == 0, "primary failed", p)


def test_two_primaries_over_private_shm_wire():
    """Two `mana-emu run` processes joined by an shm wire: txonly in one, rxonly in the other.

    This test once saw 0 packets in its 30 s window on a fresh machine. Its link name was the fixed
    `manatest`, the same in every worktree and CI job on the machine, and it waited only for the
    receiver: a sender that failed to attach (a concurrent run of the same test held the other end:
    "the shm link already has both ends attached") or died showed up as "no packets", with the
    sender's output never shown. The link object also stayed in /dev/shm after every run (the
    endpoint's destructor does not run when testpmd exits), so an end still held by a process of
    an earlier or concurrent run was joined instead of a fresh link. Now the link name is private to
    this run, the sender is watched (attached, sending) before the receiver's count is awaited, and
    `mana-emu run` removes the object when its command ends and no live process holds an end."""
    mac_a, mac_b = "00:0d:3a:00:0a:01", "00:0d:3a:00:0b:01"
    link = f"mana-mp-{os.getpid()}"
    b = Program([*emu_run(["--mac", mac_b, "--wire", f"shm:{link}"]), "--", "dpdk-testpmd",
                 *harness.eal_args("mana-shm-b", ["-a", EMU_BDF]), "--", "--forward-mode=rxonly",
                 "--auto-start", "--stats-period", "1"])
    b.wait_for(r"Port 0: " + mac_b.upper())
    a = Program([*emu_run(["--mac", mac_a, "--wire", f"shm:{link}"]), "--", "dpdk-testpmd",
                 *harness.eal_args("mana-shm-a", ["-a", EMU_BDF]), "--", "--forward-mode=txonly",
                 "--auto-start", "--stats-period", "1", f"--eth-peer=0,{mac_b}"])
    a.wait_for(r"Port 0: " + mac_a.upper())
    a.wait_for(r"Tx-pps:\s+[1-9]")
    b.wait_for(r"RX-packets:\s+[1-9]\d{3,}")
    expect(a.stop() == 0, "sender failed", a)
    expect(b.stop() == 0, "receiver failed", b)
    expect(not os.path.exists(f"/dev/shm/mana-emu-{link}"),
           f"/dev/shm/mana-emu-{link} left behind after both ends exited")


def test_hot_removal_raises_removal_event():
    """The removal event, on which testpmd closes the port. Our driver raises it at the removal only
    when it will not recover the port by itself (recovery_timeout=0; test_servicing.py has the
    rest); DPDK's own net_mana (the cross-check) always does."""
    devargs = [] if harness.SYSTEM_PMD else ["-a", f"{EMU_BDF},recovery_timeout=0"]
    p = testpmd_on_emu(["--ports", "1"], "mana-rmv", ["--forward-mode=txonly", "--auto-start",
                                                       "--stats-period", "1"], eal_extra=devargs or None)
    p.wait_for(r"Tx-pps:\s+[1-9]")
    emu_ctl(p, "remove", "0")
    p.wait_for(r"Port 0: device removal event")
    expect(p.stop() == 0, "testpmd did not survive the removal", p)


if __name__ == "__main__":
    harness.main([test_proc_info_secondary_reads_stats, test_secondary_process_forwards_its_own_queues,
                  test_telemetry_reports_port_stats,
                  test_two_primaries_over_private_shm_wire, test_hot_removal_raises_removal_event])
