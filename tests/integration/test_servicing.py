#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Azure servicing (the VF removed and added back) under Azure's own testpmd line, which leaves
testpmd's removal handling on (no --no-rmv-interrupt): testpmd closes a port on
RTE_ETH_EVENT_INTR_RMV, so the driver raises that event only when it will not bring the port back
by itself (doc/guide.md "VF removal and recovery"). The port must survive 5 remove/add cycles
with its rate within ±12.5 % of the rate measured before the first removal (LISA's hot-plug
criterion); a recovery that fails must still end in the removal event, and testpmd closing the port."""

import re
import statistics
import time

from emulator import NO_OBJECTS, live
import harness
from harness import EMU_BDF, Program, emu_ctl, emu_mac, emu_run, expect, pmd_args

# One testpmd with testpmd's default mbuf pool (about 370 MB): hugepages.py.
HUGEPAGES_MB = 512

CYCLES = 5
TOLERANCE = 0.125
SAMPLES = 3  # stats periods (2 s each) whose median is one measurement after a cycle
BASELINE_SAMPLES = 5
# Under a third of the lowest rate the line reached on the 2-core machine with another integration
# test running beside it (1.68 Mpps against a cap of 2 Mpps, 2026-12-06): the rate is the cap's, not
# the machine's, and a port that does not come back whole still falls below it.
TX_PPS = 500_000


def azure_line(prefix, devargs=""):
    """seeds/004's "MANA single queue test", verbatim but for: the lcores of `-l 1-3` placed on this
    machine's two CPUs (as integration-install does), -d to load the driver built here,
    --file-prefix to keep apart from other DPDK programs on the machine. The emulator's device
    thread runs on CPU 0, beside testpmd's idle main lcore, off the forwarding lcore, and the port
    sends at most TX_PPS frames a second, as on Azure, where each VM size has a cap: without it
    the rate of this line on a shared 2-core machine moves by ±25 % in a minute with no event at
    all (4.2 to 6.8 Mpps measured), more than the ±12.5 % this test checks."""
    return Program([*emu_run(["--device-cpu", "0", "--tx-pps", str(TX_PPS)]), "--", "dpdk-testpmd",
                    "--lcores", "1@0,2@1,3@0",
                    f"--vdev={EMU_BDF},mac={emu_mac(0)}{devargs}", "--file-prefix", prefix,
                    *pmd_args(), "--", "--forward-mode=txonly", "--auto-start", "--txd=128",
                    "--rxd=128", "--stats", "2"])


def tx_pps(p, count, start):
    """The Tx-pps of the next `count` stats blocks printed after line `start`, skipping the first
    (its period may straddle an event)."""
    values = []
    index = start
    for _ in range(count + 1):
        m = p.wait_for(r"Tx-pps:\s+(\d+)", start=index, timeout=20)
        index = p.last_index + 1
        values.append(int(m.group(1)))
    return values[1:]


def never_printed(p, pattern, what):
    rx = re.compile(pattern)
    hits = [line for line in p.lines if rx.search(line)]
    expect(not hits, f"{what}: {hits[:3]}", p)


def test_azure_line_survives_five_servicing_cycles():
    p = azure_line("mana-servicing")
    p.wait_for(r"Port 0: " + emu_mac(0).upper())
    before = statistics.median(tx_pps(p, BASELINE_SAMPLES, 0))
    expect(before > 0, "no traffic before the first removal", p)
    report = [f"baseline: {before} pps (median of {BASELINE_SAMPLES} periods of 2 s)"]
    for cycle in range(1, CYCLES + 1):
        mark = len(p.lines)
        expect(emu_ctl(p, "remove", "0") == "ok VF 0 removed", f"cycle {cycle}: remove refused", p)
        p.wait_for(r"Port 0: error recovering event", start=mark, timeout=30)
        harness.repeat_until(lambda: (time.sleep(0.05), live(p))[1], lambda v: v == NO_OBJECTS,
                             f"cycle {cycle}: the removed VF's verbs objects freed", timeout=30)
        expect(emu_ctl(p, "add", "0").startswith("ok VF 0 added"), f"cycle {cycle}: add refused", p)
        p.wait_for(r"Port 0: error recovery successful event", start=mark, timeout=30)
        after = statistics.median(tx_pps(p, SAMPLES, p.last_index))
        deviation = (after - before) / before
        report.append(f"cycle {cycle}: {after} pps ({deviation:+.1%} of the baseline)")
        expect(abs(deviation) <= TOLERANCE,
               f"cycle {cycle}: rate off the baseline by more than {TOLERANCE:.1%}:\n" + "\n".join(report), p)
    print("\n".join(report), flush=True)
    never_printed(p, r"device removal event", "testpmd was told the device is gone")
    never_printed(p, r"Port 0 is closed|Port 0 is detached", "testpmd closed the port")
    expect(p.stop() == 0, "testpmd failed", p)


def test_failed_recovery_ends_in_the_removal_event():
    """recovery_timeout=1 and the VF not back: ERR_RECOVERING, no removal event while the port could
    still come back, then RECOVERY_FAILED followed by INTR_RMV, on which testpmd closes the port
    and every verbs object is freed."""
    p = azure_line("mana-servicing-fail", ",recovery_timeout=1")
    p.wait_for(r"Tx-pps:\s+[1-9]")
    mark = len(p.lines)
    emu_ctl(p, "remove", "0")
    p.wait_for(r"Port 0: error recovering event", start=mark)
    p.wait_for(r"the removal event follows only if it does not come back", start=mark)
    failed = p.wait_for(r"Port 0: error recovery failed event", start=mark, timeout=15)
    failed_at = p.last_index
    removal = p.wait_for(r"Port 0: device removal event", start=mark, timeout=15)
    expect(p.last_index > failed_at, f"the removal event came before the failure: {removal.string}", p)
    p.wait_for(r"Port 0 is closed", start=failed_at, timeout=30)
    harness.repeat_until(lambda: (time.sleep(0.05), live(p))[1], lambda v: v == NO_OBJECTS,
                         "every verbs object freed after testpmd closed the port", timeout=30)
    expect(p.stop() == 0, f"testpmd failed ({failed.string})", p)


def test_recovery_off_raises_the_removal_event_at_once():
    """recovery_timeout=0: the port will not come back by itself, so the removal event comes at the
    removal, with no ERR_RECOVERING, and testpmd closes the port."""
    p = azure_line("mana-servicing-off", ",recovery_timeout=0")
    p.wait_for(r"Tx-pps:\s+[1-9]")
    mark = len(p.lines)
    emu_ctl(p, "remove", "0")
    p.wait_for(r"Port 0: device removal event", start=mark, timeout=15)
    p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
    never_printed(p, r"error recovering event", "ERR_RECOVERING with recovery off")
    expect(p.stop() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_azure_line_survives_five_servicing_cycles,
                  test_failed_recovery_ends_in_the_removal_event,
                  test_recovery_off_raises_the_removal_event_at_once])
