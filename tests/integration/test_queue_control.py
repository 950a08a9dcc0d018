#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Queues at run time (doc/guide.md "Queues at run time"), driven by testpmd on the emulator with a
TAP wire: RX queue stop/start and deferred start (frames of a stopped queue are not delivered, the
others are; after start it receives again, without the frames it got while stopped), TX queue
stop/start, descriptor status, queue info with the burst mode, and the RSS table and key changed
while the port forwards (traffic then lands per a Toeplitz reference); no mbuf leaks."""

import re
import subprocess

from emulator import device_port
import harness
from harness import (EMU_BDF, Program, emu_ctl, emu_mac, emulated_env, expect, pmd_args,
                     testpmd_on_emu)
from launch import PRIMARY_LCORES, SECONDARY_LCORES, tap_testpmd
from tap_peer import MANA_DEFAULT_RSS_KEY, toeplitz, wait_until
from testpmd_cli import FORWARDING_STARTED, command, in_use, run, show, xstats

from scapy.all import IP, TCP, UDP, Ether, Raw, conf, sendp  # noqa: E402

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd and its secondary (shared memory), measured 376 MB.
HUGEPAGES_MB = 512

conf.verb = 0
TAP = "mqctltap0"
PORT_MAC = emu_mac(0)
RX_LINE = re.compile(r"src=02:00:00:00:([0-9A-F]{2}):([0-9A-F]{2}) .*(?:RSS|Receive) queue=0x([0-9a-f]+)")
NEW_KEY = bytes(range(1, 41))
RING = 64


def device_drops(p):
    return device_port(p)["rx_no_wqe_drops"]


def flow(i):
    ip = IP(src=f"198.18.{1 + i // 200}.{1 + i % 200}", dst="198.19.0.1")
    l4 = TCP(sport=1024 + i, dport=80) if i % 2 else UDP(sport=1024 + i, dport=53)
    return Ether(src=f"02:00:00:00:{i >> 8:02x}:{i & 0xFF:02x}", dst=PORT_MAC) / ip / l4 / Raw(b"x" * 18)


def flow_hash(i, key=MANA_DEFAULT_RSS_KEY):
    f = flow(i)
    ip, l4 = f[IP], f[IP].payload
    data = (bytes(map(int, ip.src.split("."))) + bytes(map(int, ip.dst.split(".")))
            + l4.sport.to_bytes(2, "big") + l4.dport.to_bytes(2, "big"))
    return toeplitz(key, data)


def received(p, mark):
    """Flow index -> queue of every frame testpmd showed (set verbose 1) since line `mark`."""
    seen = {}
    for line in p.lines[mark:]:
        m = RX_LINE.search(line)
        if m:
            seen[int(m.group(1), 16) << 8 | int(m.group(2), 16)] = int(m.group(3), 16)
    return seen


def send_and_wait(p, flows, expect_seen):
    """Sends `flows` from the TAP and waits until testpmd showed every flow of `expect_seen`;
    returns what it showed of `flows`."""
    mark = len(p.lines)
    sendp([flow(i) for i in flows], iface=TAP)
    try:
        wait_until(lambda: p.pump() is not None and expect_seen <= set(received(p, mark)), 60,
                   "frames at testpmd")
    except harness.Failure:
        missing = sorted(expect_seen - set(received(p, mark)))
        nonzero = {k: v for k, v in xstats(p).items() if v}
        expect(False, f"flows {missing} not at testpmd; xstats {nonzero}; emulator: "
               f"{emu_ctl(p, 'counters', '0')}", p)
    return received(p, mark)


def expect_quiet(p, line):
    out = run(p, line)
    expect(not re.search(r"(?i)fail|error|bad|not supported|invalid", out), f"{line}: {out}", p)


def start_fwd(p):
    mark = len(p.lines)
    p.send("start")
    p.wait_for(FORWARDING_STARTED, start=mark)


def stop_fwd(p):
    command(p, "stop", r"Done\.|Packet forwarding not started")


def finish_clean(p):
    """Stops forwarding and the port: no error completion, every mbuf back in the pool, a clean
    exit."""
    stop_fwd(p)
    expect_no_error_completions(p)
    command(p, "port stop 0")
    expect(in_use(p) == 0, f"{in_use(p)} mbufs not back in the pool after port stop", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_rx_queue_stop_start_and_deferred_start():
    """Queue 1 deferred: its flows are not delivered while queue 0's are; after `port 0 rxq 1
    start` both queues receive and none of the frames queue 1 got while stopped comes out; the same
    after a run-time stop; the port's mbufs all come back at port stop."""
    p = tap_testpmd(TAP, "mqctl-rx",
                    ["--rxq=2", "--txq=2", "--forward-mode=rxonly", f"--rxd={RING}"])
    command(p, "port stop 0")
    expect_quiet(p, "port 0 rxq 1 deferred_start on")
    command(p, "port start 0", rf"Port 0: {PORT_MAC.upper()}")
    info = show(p, "show rxq info 0 1", r"Burst mode:")
    expect("RX deferred start: on" in info and "Rx queue state: stopped" in info,
           f"queue 1 not a stopped deferred queue:\n{info}", p)
    # Scalar, or the vector implementation of the CPU or of MANA_SIMD_BITWIDTH (doc/guide.md "RX
    # implementation").
    expect(re.search(r"Burst mode: " + harness.expected_rx_burst_mode(), info) is not None,
           f"not the expected burst mode ({harness.expected_rx_burst_mode()}):\n{info}", p)
    p.send("set verbose 1")
    start_fwd(p)
    queue = {i: (flow_hash(i) & 63) % 2 for i in range(600)}
    batch = range(0, 48)
    seen = send_and_wait(p, batch, {i for i in batch if queue[i] == 0})
    expect(all(queue[i] == 0 for i in seen), f"a deferred queue delivered flows {seen}", p)
    # Queue 0 polled, its ring posted again: the descriptor 10 from its tail is posted and empty.
    stop_fwd(p)
    status = show(p, "show port 0 rxq 0 desc 10 status", r"Desc status = ")
    expect("Desc status = AVAILABLE" in status, f"rxq 0 desc 10: {status}", p)
    expect_quiet(p, "port 0 rxq 1 start")
    info = show(p, "show rxq info 0 1", r"Burst mode:")
    expect("Rx queue state: started" in info, f"queue 1 not started:\n{info}", p)
    start_fwd(p)
    batch = range(50, 98)
    seen = send_and_wait(p, batch, set(batch))
    expect(all(seen[i] == queue[i] for i in batch), f"flows on the wrong queue: {seen}", p)
    expect(not set(seen) - set(batch), f"frames received while stopped came out: {seen}", p)

    stop_fwd(p)
    expect_quiet(p, "port 0 rxq 1 stop")
    start_fwd(p)
    # More frames for queue 1 than its ring holds: the NIC fills the ring, then drops the rest for
    # want of a WQE (the device's count: on Azure RX-missed cannot show it, doc/hardware.md §2.11).
    # Queue 0 gets fewer frames than it has posted, so that a polling lcore descheduled on a loaded
    # machine cannot make it drop any.
    missed_before = device_drops(p)
    stopped = [i for i in range(200, 600) if queue[i] == 1][:RING + 40]
    batch = sorted(stopped + [i for i in range(200, 600) if queue[i] == 0][:RING // 2])
    seen = send_and_wait(p, batch, {i for i in batch if queue[i] == 0})
    expect(all(queue[i] == 0 for i in seen), f"a stopped queue delivered flows {seen}", p)
    harness.repeat_until(lambda: device_drops(p) - missed_before,
                         lambda v: v >= len(stopped) - RING, f"{len(stopped) - RING} no-WQE drops",
                         timeout=30)
    stop_fwd(p)
    expect_quiet(p, "port 0 rxq 1 start")
    start_fwd(p)
    batch = range(150, 198)
    seen = send_and_wait(p, batch, set(batch))
    expect(set(seen) == set(batch), f"after start: {sorted(seen)}", p)
    # Frames waiting in queue 0 (not polled): the first descriptor is done.
    stop_fwd(p)
    sendp([flow(i) for i in range(200) if queue[i] == 0][:4], iface=TAP)
    # (22.11's testpmd: "Used desc count = 4"; 24.11's: "RxQ 0 used desc count = 4")
    wait_until(lambda: re.search(r"[Uu]sed desc count = 4\b", show(p, "show port 0 rxq 0 desc used count",
                                                                  r"[Uu]sed desc count = ")), 30,
               "4 used descriptors on rxq 0")
    for desc, want in ((0, "DONE"), (3, "DONE"), (4, "AVAILABLE")):
        status = show(p, f"show port 0 rxq 0 desc {desc} status", r"Desc status = ")
        expect(f"Desc status = {want}" in status, f"rxq 0 desc {desc}: {status}", p)
    expect_no_error_completions(p)
    command(p, "port stop 0")
    expect(in_use(p) == 0, f"{in_use(p)} mbufs not back in the pool after port stop", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def expect_no_error_completions(p):
    errors = {k: v for k, v in xstats(p).items() if re.fullmatch(r"(?:rx|tx)_cqe_\w+_errors", k)}
    expect(errors and not any(errors.values()), f"error completions: {errors}", p)


def tx_counts(p):
    counts = xstats(p)
    return {q: counts[f"tx_q{q}_packets"] for q in (0, 1)}


def test_tx_queue_stop_start():
    """txonly on 2 TX queues: with TX queue 1 stopped only queue 0 sends; after start both do.
    Descriptor status and queue info answer for a TX queue."""
    p = tap_testpmd(TAP, "mqctl-tx", ["--rxq=2", "--txq=2", "--forward-mode=txonly"])
    info = show(p, "show txq info 0 0", r"Burst mode:")
    expect(re.search(r"Burst mode: Scalar", info) is not None, f"no burst mode:\n{info}", p)
    status = show(p, "show port 0 txq 0 desc 10 status", r"Desc status = ")
    expect("Desc status = DONE" in status, f"txq 0 desc 10 of an idle queue: {status}", p)
    expect_quiet(p, "port 0 txq 1 stop")
    before = tx_counts(p)
    start_fwd(p)
    moved = harness.repeat_until(lambda: tx_counts(p), lambda c: c[0] > before[0] + 1000,
                                 "1000 packets on TX queue 0", timeout=60)
    expect(moved[1] == before[1], f"a stopped TX queue sent: {before} -> {moved}", p)
    stop_fwd(p)
    expect_quiet(p, "port 0 txq 1 start")
    before = tx_counts(p)
    start_fwd(p)
    harness.repeat_until(lambda: tx_counts(p), lambda c: c[1] > before[1] + 1000,
                         "1000 packets on TX queue 1 after its start", timeout=60)
    finish_clean(p)


def test_reta_and_rss_key_while_forwarding():
    """While rxonly forwards: `port config 0 rss reta (0,1),(1,0)` swaps the two queues' entries
    (each entry i stands for all i + 2k), then `port config 0 rss-hash-key` a new key; every flow
    lands where the Toeplitz reference and the new table put it. A table the NIC cannot have is
    refused (ENOTSUP) and changes nothing."""
    p = tap_testpmd(TAP, "mqctl-rss", ["--rxq=2", "--txq=2", "--forward-mode=rxonly"])
    p.send("set verbose 1")
    start_fwd(p)
    batch = range(0, 32)
    seen = send_and_wait(p, batch, set(batch))
    expect(all(seen[i] == (flow_hash(i) & 63) % 2 for i in batch), f"default table: {seen}", p)
    expect_quiet(p, "port config 0 rss reta (0,1),(1,0)")
    reta = show(p, "show port 0 rss reta 64 (0xffffffffffffffff)", r"RSS RETA configuration: hash index=63")
    expect(re.search(r"hash index=0, queue=1\b", reta) and re.search(r"hash index=3, queue=0\b", reta),
           f"table after the update:\n{reta}", p)
    batch = range(40, 72)
    seen = send_and_wait(p, batch, set(batch))
    expect(all(seen[i] == 1 - (flow_hash(i) & 63) % 2 for i in batch), f"swapped table: {seen}", p)
    bad = run(p, "port config 0 rss reta (0,0)")
    expect("return code = -95" in bad, f"a table with queue 1 twice accepted: {bad}", p)
    expect_quiet(p, f"port config 0 rss-hash-key ipv4-udp {NEW_KEY.hex()}")
    batch = range(80, 112)
    seen = send_and_wait(p, batch, set(batch))
    expect(all(seen[i] == 1 - (flow_hash(i, NEW_KEY) & 63) % 2 for i in batch),
           f"new key: {seen}", p)
    key = run(p, "show port 0 rss-hash key")
    expect(NEW_KEY.hex().upper() in key.upper().replace(" ", ""), f"key shown: {key}", p)
    # New hash types keep key and table (the NIC hashes with its own types, doc/hardware.md §2.5).
    expect_quiet(p, "port config all rss udp")
    batch = range(120, 152)
    seen = send_and_wait(p, batch, set(batch))
    expect(all(seen[i] == 1 - (flow_hash(i, NEW_KEY) & 63) % 2 for i in batch),
           f"after new hash types: {seen}", p)
    finish_clean(p)


def test_primary_stops_a_secondarys_queue():
    """testpmd --num-procs=2: a secondary sends on TX queue 1 (txonly); the primary's `port 0 txq 1
    stop` stops it (the queue's gate is in shared memory: once the stop returns no burst of any
    process is inside, and the queue's counter stays); its `start` resumes it."""
    common = ["-i", "--forward-mode=txonly", "--rxq=2", "--txq=2", "--num-procs=2",
              f"--eth-peer=0,{emu_mac(0)}"]
    primary = testpmd_on_emu(["--ports", "1"], "mqctl-mp", [*common, "--proc-id=0"],
                             eal_extra=["-a", EMU_BDF, "--proc-type=primary"], secondaries=True,
                             interactive=True, lcores=PRIMARY_LCORES)
    primary.wait_for(r"^Done")
    secondary = Program(["dpdk-testpmd", "--lcores", SECONDARY_LCORES, "--file-prefix", "mqctl-mp",
                         "--proc-type=secondary", *pmd_args(), "-a", EMU_BDF, "--", *common,
                         "--proc-id=1"], env=emulated_env(primary), stdin=subprocess.PIPE)
    secondary.wait_for(r"^Done")
    start_fwd(secondary)
    base = tx_counts(primary)[1]
    harness.repeat_until(lambda: tx_counts(primary)[1], lambda n: n > base + 1000,
                         "1000 packets of the secondary on TX queue 1", timeout=60)
    expect_quiet(primary, "port 0 txq 1 stop")
    stopped = tx_counts(primary)[1]
    # The secondary's lcore keeps calling tx_burst on queue 1 meanwhile (three round trips to it).
    for _ in range(3):
        run(secondary, "show port stats 0")
    expect(tx_counts(primary)[1] == stopped, "the secondary sent on a stopped queue", primary)
    expect_quiet(primary, "port 0 txq 1 start")
    harness.repeat_until(lambda: tx_counts(primary)[1], lambda n: n > stopped + 1000,
                         "the secondary's queue 1 to send again", timeout=60)
    stop_fwd(secondary)
    for p in (secondary, primary):
        p.send("quit")
        expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_rx_queue_stop_start_and_deferred_start, test_tx_queue_stop_start,
                  test_reta_and_rss_key_while_forwarding, test_primary_stops_a_secondarys_queue])
