#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Recovery from VF removal and re-add as Azure servicing does it (doc/guide.md "VF removal and
recovery"): the emulator removes the VF in the middle of bursts and adds it back (once on a new
PCI bus); the port must resume by itself with its packet rates after every cycle within ±12.5 % of
the rates measured once before the first removal (LISA's hot-plug criterion), no error completion on the
new queues, the verbs objects and mbufs back to their baseline, in the primary and in a secondary. Also testpmd's default removal handling (closing the port), then `port attach`."""

import statistics
import time

from emulator import NO_OBJECTS, live, removal_answered, removal_begun, sq_counters, sq_packets
import harness
from harness import (EMU_BDF, Program, emu_ctl, emu_mac, emulated_env, expect, repeat_until,
                     testpmd_on_emu)
from launch import PAIR_PEERS, PRIMARY_LCORES, SECONDARY_LCORES_BESIDE_PRIMARY
from testpmd_cli import command, in_use, show_port_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd and its secondary (shared memory), measured 358 MB.
HUGEPAGES_MB = 512


CYCLES = 20
TOLERANCE = 0.125  # as LISA's hot-plug test: no rate 12.5 % below before (nor above the cap: within())
# Each port sends at most TX_PPS frames a second (mana-emu run --tx-pps, doc/hardware.md §9.20), as
# the VM's cap shapes a port on Azure. Without the cap the rates here follow the shared 2-core
# machine and not the port: unloaded, two stable operating points 6.5 and 11 Mpps (see RATE_OPTS);
# with 5 agents' builds and tests on the machine, 0.75..1.04 Mpps txonly within one run (+31 % at
# one cycle, no fault) and io down to 403 kpps for both ports (201 kpps a port). TX_PPS is half the
# lowest rate a port reached under that load, so before and after compare the port's own recovery;
# a recovery that loses a queue, a port or a doorbell still shows as a rate below the cap.
TX_PPS = 100_000
# io forwarding reaches no cap of that size: each forwarded burst of 4 costs the forwarding lcore a
# trapped RX and TX doorbell, which bounds both ports to 120-150 kpps together, and that bound moves
# with the machine's load (-13.7 % at one cycle with another test beside it, 2026-12-06). Its cap
# puts both ports at 50 kpps, a third of that bound or less, so that io too compares the port's rate
# and not the machine's.
IO_TX_PPS = 25_000
# A measurement: the median of WINDOWS windows of WINDOW_S seconds. A window holds 50,000 frames of
# a capped txonly port (12,500 of an io one) and the cap's token bucket 1 ms of them, so a capped
# port's count moves by well under 1 % from window to window; the median of 3 discards a window in
# which testpmd's lcore or this script was descheduled, and a cycle that still misses is measured
# again, at most twice.
WINDOWS = 3
WINDOW_S = 0.5
BASELINE_WINDOWS = 10  # the one baseline: twice as many windows
NEW_PCI = "7870:0a:00.0"  # one cycle brings the VF back on another bus
# Rates on the emulator: its device thread runs on CPU 0 (testpmd's idle main lcore), off the
# forwarding lcore 1, and bursts of 4 make the forwarding lcore (each burst's doorbell is a trapped
# store) and not the emulated device the bound. With full bursts the device bounds the rate, and a
# full ring (small bursts, more trapped doorbells per packet) and an empty one are two stable
# operating points the rate flips between (measured: 6.5 and 11 Mpps) whatever the driver does.
# --rxfreet=1 keeps one RQ doorbell per RX burst as well: with the default rx_free_thresh (32) the
# doorbells thin out, the device becomes the bound again and io rates flipped by -61 % to +177 %
# between cycles.
RATE_OPTS = ["--burst=4", "--rxfreet=1"]


def rate_emu(tx_pps=TX_PPS):
    return ["--device-cpu", "0", "--tx-pps", str(tx_pps)]


def expect_no_tx_errors(p, cycle):
    """The SQs created by the recovery completed every WQE okay: an error here (e.g. a source-MAC
    drop for a frame rewritten while in flight) means an mbuf was reused before its completion.
    The SQs that died with the VF are not counted (their flushed WQEs may complete in error)."""
    errors = sq_counters(p, "error_cqes")
    expect(not any(errors.values()), f"cycle {cycle}: error completions on the new SQs: {errors}", p)


def totals(p):
    s = show_port_stats(p, last_port=1)
    return sum(s[q]["TX-packets"] for q in (0, 1)), sum(s[q]["RX-packets"] for q in (0, 1))


def rate_samples(p, windows=WINDOWS, seconds=WINDOW_S):
    """TX and RX packets per second of both ports in `windows` equal windows (the sleep is the
    measurement window, not a wait for something)."""
    samples = []
    t0 = time.monotonic()
    tx0, rx0 = totals(p)
    for _ in range(windows):
        time.sleep(seconds)
        t1 = time.monotonic()
        tx1, rx1 = totals(p)
        samples.append(((tx1 - tx0) / (t1 - t0), (rx1 - rx0) / (t1 - t0)))
        t0, tx0, rx0 = t1, tx1, rx1
    return samples


def medians(samples, directions):
    return tuple(statistics.median(s[d] for s in samples) for d in range(directions))


def deviations(after, baseline):
    return tuple((a - b) / b for a, b in zip(after, baseline))


def within(after, baseline, tx_pps=TX_PPS, tolerance=TOLERANCE):
    """Recovered: no rate more than `tolerance` below its baseline, measured once before the first
    removal (so a loss that accumulates over cycles is seen), and none more than `tolerance` above
    the larger of its baseline and the two ports' cap (so a rate past the cap is seen too). A rate
    above a baseline that stayed under the cap is a baseline taken while this 2-core machine was
    busy (CI saw a secondary-process baseline of 121 kpps against 197 kpps at the cap after the
    first recovery): it shows no fault of the recovery, which can only lose rate."""
    cap = 2 * tx_pps
    return all(a >= b * (1 - tolerance) and a <= max(b, cap) * (1 + tolerance)
               for a, b in zip(after, baseline))


def describe(cycle, after, baseline, attempts, names=("tx", "rx")):
    return f"cycle {cycle}: " + ", ".join(
        f"{n} {a:.0f} pps ({d:+.1%})" for n, a, d in zip(names, after, deviations(after, baseline))
    ) + f" ({attempts} measurements)"


def quiesced_mbufs(p, start_cmd):
    """Mbufs outside testpmd's pool with forwarding and the ports stopped; then both run again."""
    command(p, "stop")
    command(p, "port stop all")
    used = in_use(p)
    command(p, "port start all")
    p.send(start_cmd)
    return used


def await_recovery(p, mark):
    for port in (0, 1):
        p.wait_for(rf"Port {port}: error recovering event", start=mark, timeout=30)
    # The old objects are destroyed (and, disassociated, freed) while the VF is away.
    repeat_until(lambda: (time.sleep(0.05), live(p))[1], lambda v: v == NO_OBJECTS,
                 "the removed VF's verbs objects to be freed", timeout=30)


def recovery_cycles(mode_opts, start_cmd, prefix, directions, tx_pps=TX_PPS):
    """`directions`: 1 compares TX rates (txonly: testpmd does not poll RX), 2 TX and RX."""
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair", *rate_emu(tx_pps)],
                       prefix,
                       ["-i", "--no-rmv-interrupt", "--total-num-mbufs=8192", *RATE_OPTS, *mode_opts,
                        *PAIR_PEERS], interactive=True)
    p.wait_for(rf"Port 1: {emu_mac(1).upper()}")
    p.send(start_cmd)
    objects = live(p)
    mbufs = quiesced_mbufs(p, start_cmd)
    rate_samples(p)  # warm-up after the restart
    baseline = medians(rate_samples(p, BASELINE_WINDOWS), directions)
    expect(min(baseline) > 0, f"no traffic before the first removal: {baseline}", p)
    report = ["baseline: " + ", ".join(f"{n} {b:.0f} pps" for n, b in zip(("tx", "rx"), baseline)) +
              f" (median of {BASELINE_WINDOWS} windows of {WINDOW_S} s; cap {tx_pps} pps a port)"]
    for cycle in range(1, CYCLES + 1):
        mark = len(p.lines)
        expect(emu_ctl(p, "remove", "0") == "ok VF 0 removed", "remove refused", p)
        await_recovery(p, mark)
        add = ["add", "0", "--pci", NEW_PCI] if cycle == CYCLES // 2 else ["add", "0"]
        expect(emu_ctl(p, *add).startswith("ok VF 0 added"), "add refused", p)
        for port in (0, 1):
            p.wait_for(rf"Port {port}: error recovery successful event", start=mark, timeout=30)
        if start_cmd != "start":  # io: the frames in flight went with the VF; send new ones
            command(p, "stop")
            p.send(start_cmd)
        for attempt in range(1, 4):  # a loaded 2-core machine: measure again, at most twice
            after = medians(rate_samples(p), directions)
            if within(after, baseline, tx_pps):
                break
        report.append(describe(cycle, after, baseline, attempt))
        expect(within(after, baseline, tx_pps),
               f"rates after recovery off the baseline by more than {TOLERANCE:.1%}:\n" +
               "\n".join(report), p)
        expect(live(p) == objects, f"cycle {cycle}: verbs objects {live(p)} != {objects}", p)
        expect_no_tx_errors(p, cycle)
    print("\n".join(report), flush=True)
    expect(quiesced_mbufs(p, start_cmd) == mbufs, "mbufs not back to their baseline", p)
    expect(not any("kernel interface" in line for line in p.lines), "false vPort message", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_txonly_recovers_across_20_cycles():
    """Both ports send to each other (txonly: every port transmits and receives)."""
    recovery_cycles(["--forward-mode=txonly"], "start", "mana-recovery-tx", 1)


def test_io_forwarding_recovers_across_20_cycles():
    recovery_cycles(["--forward-mode=io"], "start tx_first", "mana-recovery-io", 2, IO_TX_PPS)


def printed_tx_pps(p, blocks=5):
    """Both ports' Tx-pps in each of the next `blocks` --stats-period blocks (device-wide: the
    primary's and the secondary's queues)."""
    sums = []
    for _ in range(blocks):
        total = 0
        for port in (0, 1):
            p.wait_for(rf"NIC statistics for port {port}", start=p.last_index + 1)
            total += int(p.wait_for(r"Tx-pps:\s+(\d+)", start=p.last_index).group(1))
        sums.append(total)
    return sums


def test_secondary_resumes_after_recovery():
    """A secondary testpmd sends on queue 1 of each port: after recovery its bursts run again, with
    the primary's new doorbell page, and the primary's rates are back."""
    common = ["--forward-mode=txonly", *RATE_OPTS, "--rxq=2", "--txq=2", "--num-procs=2",
              "--txonly-multi-flow",
              "--stats-period", "1", "--auto-start", "--no-rmv-interrupt", *PAIR_PEERS]
    primary = testpmd_on_emu(["--ports", "2", "--wire", "pair", *rate_emu()],
                             "mana-recovery-mp",
                             [*common, "--proc-id=0"],
                             eal_extra=["-a", EMU_BDF, "--proc-type=primary"], secondaries=True,
                             lcores=PRIMARY_LCORES)
    primary.wait_for(r"Tx-pps:\s+[1-9]")
    secondary = Program(["dpdk-testpmd", "--lcores", SECONDARY_LCORES_BESIDE_PRIMARY,
                         "--file-prefix", "mana-recovery-mp",
                         "--proc-type=secondary", *harness.pmd_args(), "-a", EMU_BDF, "--",
                         *common, "--proc-id=1"], env=emulated_env(primary))
    secondary.wait_for(r"Tx-pps:\s+[1-9]")
    primary.last_index = len(primary.lines)
    baseline = statistics.median(printed_tx_pps(primary, BASELINE_WINDOWS))
    report = [f"baseline: tx {baseline:.0f} pps (median of {BASELINE_WINDOWS} stats periods of 1 s)"]
    for cycle in range(1, 4):
        mark = len(primary.lines)
        emu_ctl(primary, "remove", "0")
        for port in (0, 1):
            primary.wait_for(rf"Port {port}: error recovering event", start=mark, timeout=30)
        emu_ctl(primary, *(["add", "0", "--pci", NEW_PCI] if cycle == 2 else ["add", "0"]))
        for port in (0, 1):
            primary.wait_for(rf"Port {port}: error recovery successful event", start=mark,
                             timeout=30)
        # Every SQ moves: queue 0 of each port is the primary's, queue 1 the secondary's.
        first = repeat_until(lambda: sq_packets(primary), lambda v: len(v) == 4,
                             "4 live SQs after recovery", timeout=30)
        repeat_until(lambda: (time.sleep(0.2), sq_packets(primary))[1],
                     lambda v: v.keys() == first.keys() and all(v[q] > first[q] for q in v),
                     f"cycle {cycle}: every SQ (the secondary's too) sending again",
                     timeout=30)
        for attempt in range(1, 4):  # a loaded 2-core machine: measure again, at most twice
            primary.last_index = len(primary.lines)
            after = statistics.median(printed_tx_pps(primary))
            if within((after,), (baseline,)):
                break
        report.append(describe(cycle, (after,), (baseline,), attempt))
        expect(within((after,), (baseline,)),
               f"rates with a secondary off the baseline by more than {TOLERANCE:.1%}:\n" +
               "\n".join(report), primary)
        expect_no_tx_errors(primary, cycle)
    print("\n".join(report), flush=True)
    expect(secondary.stop() == 0, "secondary failed", secondary)
    expect(primary.stop() == 0, "primary failed", primary)


def one_port_removed(prefix, opts, eal_extra=None):
    """testpmd sending on one port, then the VF removed. Returns testpmd and the line of the
    removal."""
    p = testpmd_on_emu(["--ports", "1"], prefix,
                       ["-i", "--forward-mode=txonly", f"--eth-peer=0,{emu_mac(0)}", *opts],
                       eal_extra=eal_extra, interactive=True)
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    p.send("start")
    mark = len(p.lines)
    emu_ctl(p, "remove", "0")
    return p, mark


def test_removal_handled_by_closing_the_port():
    """With recovery off (recovery_timeout=0) the removal event comes at once, and testpmd's default
    on it is to stop, close and detach the port. Every object is freed while the VF is away, and
    after `add` the port can be attached and started again (no false 'kernel interface is up'
    message)."""
    p, mark = one_port_removed("mana-recovery-rmv", [], ["-a", f"{EMU_BDF},recovery_timeout=0"])
    p.wait_for(r"Port 0: device removal event", start=mark)
    p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
    repeat_until(lambda: (time.sleep(0.05), live(p))[1], lambda v: v == NO_OBJECTS,
                 "every verbs object freed after the port closed", timeout=30)
    expect(emu_ctl(p, "add", "0") == "ok VF 0 added", "add refused", p)
    mark = len(p.lines)
    p.send("stop")
    p.send(f"port attach {EMU_BDF}")
    p.wait_for(r"Port 0 is attached", start=mark)
    p.send("port start 0")
    p.wait_for(r"Port 0: " + emu_mac(0).upper(), start=mark)
    p.send("start")
    repeat_until(lambda: show_port_stats(p, last_port=0), lambda s: s[0].get("TX-packets", 0) > 0,
                 "the re-attached port sending")
    expect(not any("kernel interface" in line for line in p.lines), "false vPort message", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_attach_waits_for_the_rdma_device():
    """A probe that comes between the kernel's netdev and mana_ib's RDMA device (the window after
    a re-add in which net_netvsc's hot-plug probes) waits for the RDMA device, bounded, instead of
    failing: `add 0 netdev` brings the function back without it, `port attach` starts waiting,
    `add 0 rdma` completes the re-add while testpmd is inside the probe."""
    p, mark = one_port_removed("mana-recovery-late-ib", [], ["-a", f"{EMU_BDF},recovery_timeout=0"])
    p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
    expect(emu_ctl(p, "add", "0", "netdev") == "ok VF 0 netdev added (no RDMA device yet)",
           "staged add refused", p)
    mark = len(p.lines)
    p.send("stop")
    p.send(f"port attach {EMU_BDF},recovery_timeout=0")
    p.wait_for(r"the netdev is there but not its RDMA device yet: waiting up to 5000 ms",
               start=mark)
    expect(emu_ctl(p, "add", "0", "rdma") == "ok VF 0 added", "the RDMA half of add refused", p)
    p.wait_for(r"found its RDMA device", start=mark)
    p.wait_for(r"Port 0 is attached", start=mark)
    expect(not any("no MANA Ethernet RDMA device" in line for line in p.lines[mark:]),
           "the probe failed before waiting", p)
    p.send("port start 0")
    p.wait_for(r"Port 0: " + emu_mac(0).upper(), start=mark)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_recovery_timeout_reports_failure():
    """recovery_timeout=1 (devargs): a VF that is not back in time gives RECOVERY_FAILED with the
    old objects freed; the port then refuses to start, saying why, and closes cleanly."""
    p, mark = one_port_removed("mana-recovery-timeout", ["--no-rmv-interrupt"],
                               ["-a", f"{EMU_BDF},recovery_timeout=1"])
    p.wait_for(r"Port 0: error recovering event", start=mark)
    p.wait_for(r"Port 0: error recovery failed event", start=mark, timeout=10)
    p.wait_for(r"no VF with MAC 00:0D:3A:00:00:01 came back within recovery_timeout=1 s",
               start=mark)
    expect(live(p) == NO_OBJECTS, f"objects left after the failed recovery: {live(p)}", p)
    emu_ctl(p, "add", "0")
    command(p, "stop")
    command(p, "port stop 0")
    mark = len(p.lines)
    p.send("port start 0")
    p.wait_for(r"cannot start the port: the VF was removed and did not come back: close the port",
               start=mark)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_start_before_the_removal_event():
    """A start that meets the removed VF before the removal event is read: with `--hw
    fatal-event-delay-ms=800` the VF's contexts answer EIO at `remove` and the event comes 800 ms
    later, as when the EAL interrupt thread is late to read it (doc/hardware.md §2.7). The start
    waits for the event and says the VF is removed, never that the kernel interface holds the
    vPort; the port recovers by itself and starts once the VF is back."""
    p = testpmd_on_emu(["--ports", "1", "--hw", "fatal-event-delay-ms=800"], "mana-recovery-late-event",
                       ["-i", "--forward-mode=txonly", f"--eth-peer=0,{emu_mac(0)}"],
                       interactive=True)
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    command(p, "port stop 0", r"^Done")
    mark = len(p.lines)
    removal = removal_begun(p)
    p.send("port start 0")
    p.wait_for(r"Fail to start port 0|^Done", start=mark, timeout=30)
    removal_answered(p, removal)
    ours = [line for line in p.lines[mark:] if line.startswith("net_mana:")]
    expect(any("cannot create" in line and "the VF is removed" in line for line in ours),
           f"no line says the start met the removed VF: {ours}", p)
    expect(not any("kernel interface" in line for line in ours), f"false vPort message: {ours}", p)
    expect(emu_ctl(p, "add", "0") == "ok VF 0 added", "add refused", p)
    p.wait_for(r"Port 0: error recovery successful event", start=mark, timeout=30)
    mark = len(p.lines)
    command(p, "port start 0", r"^Done")
    expect(not any("Fail to start port" in line for line in p.lines[mark:]),
           "the port did not start after the recovery", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_removal_handled_by_closing_the_port, test_attach_waits_for_the_rdma_device,
                  test_recovery_timeout_reports_failure, test_start_before_the_removal_event,
                  test_secondary_resumes_after_recovery,
                  test_txonly_recovers_across_20_cycles, test_io_forwarding_recovers_across_20_cycles])
