#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fidelity cross-check of the emulator with an independent driver: the installed DPDK's own
net_mana (Debian 13's DPDK 24.11 in the chroot of scripts/crosscheck-trixie.sh), loaded by its EAL
from its plugin folder, runs the integration tests of what that driver supports, once per hardware
profile of the emulator (every profile `mana-emu run --profile` knows, so new ones are picked up).

What DPDK 24.11's net_mana supports (drivers/net/mana/mana.h and doc/guides/nics/features/mana.ini
of DPDK v24.11): RSS (power-of-two queue counts, as many RX as TX queues), IPv4/TCP/UDP checksum
offload both ways, VLAN strip and insert, RX CQE coalescing, multi-process (secondaries forward their
own queues), removal event, MTU; at most 256 descriptors per queue (so not the 2048 of the
2025-kernel test) and none of our driver's log lines or xstats."""

import re
import subprocess
import sys
import time
from pathlib import Path

import harness
import test_forwarding as fwd
import test_multiprocess as mp
import test_tap as tap
from harness import BUILD, MANA_EMU, expect, testpmd_on_emu

# Hugepages its DPDK processes take together at their peak (hugepages.py): Debian 13's testpmd in the
# chroot, one at a time or a primary with its secondary, measured 376 MB (scripts/crosscheck-trixie.sh).
HUGEPAGES_MB = 512

TOP = Path(__file__).resolve().parents[2]


def profiles():
    """The emulator's hardware profiles, from its own error line for an unknown one."""
    out = subprocess.run([MANA_EMU, "run", "--profile", "?", "--", "true"], capture_output=True, text=True)
    m = re.search(r"known: ([^)]*)\)", out.stderr)
    if not m:
        raise harness.Failure(f"mana-emu did not list its profiles: {out.stderr}")
    return [name.strip() for name in m.group(1).split(",")]


def net_mana_libraries(p):
    """The net_mana libraries mapped into the testpmd that `mana-emu run` started for `p`."""
    children = subprocess.run(["pgrep", "-P", str(p.proc.pid)], capture_output=True, text=True)
    found = set()
    for pid in children.stdout.split():
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            if "net_mana" in line:
                found.add(line.split()[-1])
    return found


def test_installed_net_mana_is_the_one_loaded():
    p = testpmd_on_emu([], "mana-sys-load", ["--forward-mode=txonly", "--auto-start", "--stats-period", "1"])
    p.wait_for(r"Tx-pps:\s+[1-9]")
    libs = net_mana_libraries(p)
    expect(p.stop() == 0, "testpmd failed", p)
    ours = [lib for lib in libs if lib.startswith((str(BUILD), str(TOP), "/run/mana-pmd-tests"))]
    expect(libs and not ours and all(lib.startswith("/usr/lib/") for lib in libs),
           f"net_mana mapped from {sorted(libs)}: expected only the installed DPDK's", p)


def test_rss_4_queues():
    tap.check_rss(4)


def test_rss_8_queues():
    tap.check_rss(8)


# Per profile: what DPDK 24.11's net_mana supports, from the project's own integration tests.
PER_PROFILE = [
    fwd.test_io_pair_trap_doorbells,
    fwd.test_io_pair_poll_doorbells,
    fwd.test_io_pair_rx_coalescing,
    fwd.test_mac_mode_pair,
    fwd.test_txonly_and_rxonly_across_pair,
    fwd.test_azure_single_queue_command_line,
    fwd.test_azure_multi_queue_command_line,
    # Not fwd.test_pair_counters_match_exactly: DPDK 24.11's net_mana counts a packet as sent when it
    # reaps its completion in a later tx_burst (drivers/net/mana/tx.c), so after `stop` its
    # TX-packets lag the peer's RX-packets by the last burst, on hardware too.
    test_rss_4_queues,
    test_rss_8_queues,
    tap.test_checksum_offload_on_the_wire_and_bad_rx_checksums,
    tap.test_vlan_strip_and_insert,
    tap.test_ping_from_netns_answered_by_icmpecho,
    mp.test_secondary_process_forwards_its_own_queues,
    mp.test_hot_removal_raises_removal_event,
]


# Where DPDK 24.11's net_mana and the emulator's profile disagree: (profile, test) -> (the profile's
# behaviour 24.11 cannot handle, the emulator options that take that one behaviour out, why). Such a
# test runs under the profile with those options, so the rest of the profile is still checked, and
# test_strict_vport_offset_300_needs_the_long_oob checks the disagreement itself. The lead decides
# what the evidence says (doc/hardware.md). 24.11's probe also opens the IB device in a secondary
# process, to query it; the emulator used to refuse that and now opens a query-only context there
# (doc/emulator.md), as the kernel lets any process open the device.
# strict's vport-offset=300 does not fit the short TX OOB's 8-bit field, the only form 24.11 writes
# (drivers/net/mana/tx.c: short_oob.short_vport_offset = tx_vp_offset); the Linux kernel switches to
# the long OOB's 12-bit field above 255 (doc/hardware.md §4.3). Every 24.11 send then completes with
# an error CQE (TX-errors, no TX-packets); with --hw vport-offset=0 the same profile sends.
# strict's cq-doorbell=stall (the kernel's rule of a CQ doorbell every 8 wraps, doc/hardware.md §9.6)
# stalls 24.11's queues after 8 wraps: it rings no CQ doorbell while polling (§10.1).
VPORT_OFFSET_300 = (["--hw", "vport-offset=0", "--hw", "cq-doorbell=off"],
                    "vport-offset=300 needs the long TX OOB, which 24.11 never writes, and 24.11 "
                    "rings no CQ doorbell while polling")
KNOWN_DISAGREEMENTS = {("strict", fn.__name__): VPORT_OFFSET_300 for fn in PER_PROFILE}


def with_profile(profile, fn):
    def run():
        harness.PROFILE = profile
        overrides, why = KNOWN_DISAGREEMENTS.get((profile, fn.__name__), ([], ""))
        harness.PROFILE_OVERRIDES = overrides
        if why:
            print(f"{profile}/{fn.__name__}: with {' '.join(overrides)} ({why})", flush=True)
        try:
            fn()
        finally:
            harness.PROFILE = ""
            harness.PROFILE_OVERRIDES = []
    return run


def test_strict_vport_offset_300_needs_the_long_oob():
    """The disagreement itself: under strict, 24.11 posts every send with the short OOB, whose 8-bit
    vPort offset cannot say 300, and the emulator completes each with an error CQE. How many sends
    it posts depends on the run's length; that none went out and some were refused is exact."""
    harness.PROFILE = "strict"
    try:
        p = testpmd_on_emu([], "mana-sys-strict", ["--forward-mode=txonly", "--auto-start",
                                                    "--stats-period", "1"])
        p.wait_for(r"Port 0: ")

        def sq_totals():
            sqs = harness.device_counters(p)["sqs"]
            return sum(q["packets"] for q in sqs), sum(q["error_cqes"] for q in sqs)

        sent, refused = harness.repeat_until(
            lambda: (time.sleep(0.1), sq_totals())[1], lambda v: v[0] != 0 or v[1] >= 1000,
            "1000 sends of 24.11 completed by the emulator", timeout=60)
        expect(p.stop() == 0, "testpmd failed", p)
        expect(sent == 0 and refused > 0,
               f"strict with 24.11: {sent} frames sent and {refused} error CQEs; expected none sent "
               "and every send refused (if 24.11 now writes the long OOB, drop VPORT_OFFSET_300)", p)
    finally:
        harness.PROFILE = ""


def main():
    if not harness.SYSTEM_PMD:
        print("test_system_net_mana: set MANA_PMD=system (scripts/crosscheck-trixie.sh runs it)")
        sys.exit(2)
    only = sys.argv[1:]  # profile names, to run a part by hand
    named = [("installed-net-mana-loaded", test_installed_net_mana_is_the_one_loaded),
             ("strict/vport-offset-300-needs-the-long-oob", test_strict_vport_offset_300_needs_the_long_oob)]
    for profile in profiles():
        if only and profile not in only:
            continue
        named += [(f"{profile}/{fn.__name__}", with_profile(profile, fn)) for fn in PER_PROFILE]
    sys.exit(harness.run_main(named))


if __name__ == "__main__":
    main()
