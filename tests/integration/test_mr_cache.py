#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The MR cache under pools created while sending (doc/guide.md "Memory registration"): 8 TX queues
of one port, 4 in a primary and 4 in a secondary mana-mr-stress, each process creating new mempools
while its worker sends from the newest one and frees the one it replaced once its mbufs are back
(new pools may reuse that memory). Every pool must be registered when it is created (the emulator's
MR count grows before its first mbuf is sent), no tx_burst call may stall beyond the bound, the
emulator must see no bad lkey (an error completion) and the driver no MR miss, and the MRs of every
freed pool (in either process) are gone: at the end the emulator has those of the RX pool and of
each process's last pool only."""

import re

import harness
from harness import (EMU_BDF, MANA_EMU, Program, child_environ, emu_run, emulated_env, expect,
                     pmd_args)

# Hugepages its DPDK processes take together at their peak (hugepages.py): the MR stress program's small pools, measured 22 MB.
HUGEPAGES_MB = 64

STRESS = harness.BUILD / "app/mana-mr-stress"
POOLS = 6
# Longest tx_burst call allowed (µs). Without any registration on the data path a burst takes a few
# µs; the bound leaves room for the preemptions of a loaded 2-core machine, not for a registration
# waiting on another process (measured: see the commit message and doc/guide.md).
MAX_BURST_US = 200_000

DONE = (r"mr_stress: done sent=(\d+) from_last_pool=(\d+) max_burst_us=(\d+) tx_errors=(\d+) "
        r"tx_cqe_errors=(\d+) mr_miss=(\d+) late_pools=(\d+) undrained_pools=(\d+) last_pool_mrs=(-?\d+)")


def check_done(p, who):
    m = p.wait_for(DONE, timeout=120)
    sent, from_last, burst_us, tx_errors, cqe_errors, mr_miss, late, undrained, last = map(int, m.groups())
    print(f"{who}: sent={sent} max_burst_us={burst_us} late_pools={late}", flush=True)
    expect(sent > 0 and from_last >= 1000, f"{who} sent too little from its last pool", p)
    expect(undrained == 0, f"{who}: {undrained} pools could not be freed (mbufs not back)", p)
    expect(late == 0, f"{who}: {late} of {POOLS} pools were not registered at creation", p)
    expect(mr_miss == 0, f"{who}: {mr_miss} packets found no MR", p)
    expect(tx_errors == 0 and cqe_errors == 0,
           f"{who}: error completions (bad lkey?): {tx_errors} on its queues, {cqe_errors} on the port", p)
    expect(burst_us <= MAX_BURST_US, f"{who}: a tx_burst call took {burst_us} µs", p)
    expect("mana-emu:" not in p.output(), f"{who}: the emulator complained", p)
    return last


def test_eight_queues_two_processes_new_pools():
    prefix = "mana-mrcache"
    stress = ["--pools", str(POOLS), "--interval-ms", "150", "--emu-ctl", str(MANA_EMU)]
    primary = Program([*emu_run(["--ports", "1", "--wire", "null"]), "--", STRESS,
                       "--lcores=0@0,2@0", "--file-prefix", prefix, *pmd_args(),
                       "-a", EMU_BDF, "--", "--first-queue", "0", "--queues", "4", *stress])
    primary.wait_for(r"mr_stress: ready \(primary")
    env = {**emulated_env(primary), "MANA_EMU_CONTROL": child_environ(primary, "MANA_EMU_CONTROL")}
    secondary = Program([STRESS, "--lcores=1@1,3@1", "--file-prefix", prefix, "--proc-type=secondary",
                         *pmd_args(), "-a", EMU_BDF, "--", "--first-queue", "4", "--queues", "4",
                         *stress], env=env)
    secondary_last = check_done(secondary, "secondary")
    expect(secondary.finish() == 0, "secondary failed", secondary)
    primary_last = check_done(primary, "primary")
    expect(primary.stop() == 0, "primary failed", primary)
    start, end = map(int, primary.wait_for(r"emulator MRs at start (-?\d+), at end (-?\d+)").groups())
    expect(start > 0 and end == start + primary_last + secondary_last,
           f"MRs of freed pools left: {start} at start (the RX pool), {end} at the end, the last "
           f"pools have {primary_last} + {secondary_last}", primary)
    expect(not re.search(r"cannot register|not registered", primary.output() + secondary.output()),
           "a registration failed", primary)


if __name__ == "__main__":
    harness.main([test_eight_queues_two_processes_new_pools])
