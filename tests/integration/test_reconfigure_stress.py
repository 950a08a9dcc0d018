#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Stop, reconfigure and start that no process can race (doc/guide.md, "Multi-process"): a primary
testpmd stops its ports, changes queue counts and ring sizes and starts them again, CYCLES times,
while a secondary testpmd generates and receives traffic at full rate on its own queue ids (queue
1 of each port, which the primary's reconfigurations remove and bring back). The secondary keeps
polling through all of it: its bursts must return 0 on a stopped or released queue and never touch
a ring, CQ, doorbell page or mbuf of one. At the end: no crash, every start succeeded, the
secondary forwarded after the last start, no doorbell named a dead queue, no error completion,
every mbuf back in its pool after the last stop. Primary and secondary run on distinct lcore ids
(each lcore id has one mempool cache, shared by all processes). Against the driver without kept
queue structs and NULL checks the secondary crashes in cycle 1 (the first reconfiguration to one
queue)."""

import os
import re
import subprocess
import time

from emulator import device_counters
import harness
from harness import EMU_BDF, Program, emulated_env, expect, pmd_args, testpmd_on_emu
from launch import PAIR_PEERS
from testpmd_cli import command, parse_forward_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd and its secondary (shared memory), measured 376 MB.
HUGEPAGES_MB = 512

CYCLES = int(os.environ.get("MANA_STRESS_CYCLES", "200"))
PREFIX = "mana-stress-reconf"
# (RX/TX queues, descriptors): queue 1 disappears in every other configuration; ring sizes change
# each time, so DPDK releases and sets up every queue again. At most 2 queues: with more, the
# primary's share would include queue 1, which the secondary polls.
CONFIGS = [(2, 256), (1, 128), (2, 64), (1, 256)]
POOL = "mb_pool_0"


def start_ports(p, cycle):
    mark = len(p.lines)
    p.send("port start all")
    p.wait_for(r"^Done|Fail", timeout=60, start=mark)
    text = "\n".join(p.lines[mark:p.last_index + 1])
    expect("Fail" not in text, f"cycle {cycle}: port start failed:\n{text}", p)


def reconfigure(p, cycle):
    rxq, desc = CONFIGS[cycle % len(CONFIGS)]
    command(p, "stop", done=r"^Done")
    command(p, "port stop all", done=r"^Done|Fail")
    for line in (f"port config all rxq {rxq}", f"port config all txq {rxq}",
                 f"port config all rxd {desc}", f"port config all txd {desc}"):
        p.send(line)
    start_ports(p, cycle)
    # New frames for both processes: a stop destroys the frames in flight.
    command(p, "start tx_first", done=r"^Logical Core 3")


def mempool_in_use(primary):
    """The mbufs of the primary's pool that are neither in its ring nor in any lcore's cache."""
    out = subprocess.run(["dpdk-proc-info", "--file-prefix", PREFIX,
                          *pmd_args(), "-a", EMU_BDF, "--", f"--show-mempool={POOL}"],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, **harness.pool_user_env(primary)})
    expect(out.returncode == 0, f"dpdk-proc-info exited with {out.returncode}: {out.stdout}{out.stderr}",
           primary)
    m = re.search(r"Count: avail \((\d+)\), in use \((\d+)\)", out.stdout)
    expect(m, f"no pool counts in:\n{out.stdout}", primary)
    # The pool's ops as proc-info's own table names them: the primary's (harness.pool_user_env).
    ops = re.search(r"ops_name (\S+)", out.stdout)
    primary_ops = primary.wait_for(r"preferred mempool ops selected: (\S+)", timeout=5)
    expect(ops and ops.group(1) == primary_ops.group(1),
           f"proc-info reads the pool's ops as {ops and ops.group(1)}, testpmd uses {primary_ops.group(1)}",
           primary)
    return int(m.group(2)), out.stdout


def test_secondary_forwards_while_primary_reconfigures():
    common = ["--rxq=2", "--txq=2", "--num-procs=2", "--forward-mode=mac", "--txonly-multi-flow",
              *PAIR_PEERS]
    # --disable-link-check: testpmd would wait 100 ms on each `port stop` for the link it reads down
    # (the port is stopped): the reconfigurations are what this test is about, not the link.
    primary = testpmd_on_emu(["--ports", "2", "--wire", "pair"], PREFIX,
                             ["-i", *common, "--proc-id=0", "--disable-link-check"], interactive=True,
                             secondaries=True,
                             lcores="2@0,3@1", eal_extra=["-a", EMU_BDF, "--proc-type=primary"])
    primary.wait_for(r"^Done")
    command(primary, "start tx_first", done=r"^Logical Core 3")
    secondary = Program(["dpdk-testpmd", "--lcores", "4@0,5@1", "--file-prefix", PREFIX,
                         "--proc-type=secondary", *pmd_args(), "-a", EMU_BDF, "--", *common,
                         "--proc-id=1", "--auto-start", "--tx-first",
                         "--stats-period", "1"], env=emulated_env(primary))
    secondary.wait_for(r"Rx-pps:\s+[1-9]", timeout=60)
    started = time.monotonic()
    for cycle in range(CYCLES):
        reconfigure(primary, cycle)
        expect(secondary.proc.poll() is None, f"secondary died in cycle {cycle}", secondary)
        secondary.pump(0)
    elapsed = time.monotonic() - started
    # The last configuration has queue 1 again: the secondary must forward on it.
    reconfigure(primary, 0)
    mark = len(secondary.lines)
    secondary.wait_for(r"Rx-pps:\s+[1-9]", start=mark, timeout=30)
    secondary.wait_for(r"Tx-pps:\s+[1-9]", start=secondary.last_index, timeout=30)
    counters = device_counters(primary)
    expect(secondary.stop() == 0, "secondary failed", secondary)
    fwd = parse_forward_stats(secondary.output())
    expect(all(fwd.get(q, {}).get("RX-packets", 0) > 0 for q in (0, 1)),
           f"the secondary's streams: {fwd}", secondary)
    command(primary, "stop", done=r"^Done")
    command(primary, "port stop all", done=r"^Done|Fail")
    in_use, pool = mempool_in_use(primary)
    primary.send("quit")
    expect(primary.finish() == 0, "primary failed", primary)
    print(f"{CYCLES} cycles in {elapsed:.1f}s ({1000 * elapsed / CYCLES:.0f} ms each)")
    out = primary.output()
    expect("mana-emu:" not in out and "mana-emu:" not in secondary.output(),
           "the emulator complained", primary)
    expect(counters["bad_doorbells"] == 0, f"doorbells to dead queues: {counters}", primary)
    for kind in ("sqs", "rqs"):
        for q in counters.get(kind, []):
            expect(q["error_cqes"] == 0 and q["cq_doorbell_violations"] == 0,
                   f"{kind}: {q}", primary)
    expect(in_use == 0, f"{in_use} mbufs of {POOL} not back after the last stop:\n{pool}", primary)


if __name__ == "__main__":
    harness.main([test_secondary_forwards_while_primary_reconfigures])
