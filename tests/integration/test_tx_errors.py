#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TX error completions in the middle and at the end of a burst leave no descriptor held: with CQE
suppression the failed last WQE of a burst yields the burst's only CQE, and the driver must complete
the whole burst by it (doc/hardware.md §4.7, §4.9), whichever unit the NIC reports the WQE offset
in (mana-emu --hw tx-wqe-offset=bu|bytes). Counted exactly: mbufs held by the port, the emulator's
CQEs and testpmd's TX-errors."""


from emulator import device_counters
import harness
from harness import emu_ctl, emu_mac, expect, testpmd_on_emu
from testpmd_cli import command, in_use, show_port_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time, measured 352 MB.
HUGEPAGES_MB = 512

BURST = 8
FAULTS = 4  # WQEs 3, 7, 11, 15 after arming: the middle and the end of two bursts


def sq_counters(p):
    """The emulator's counters of the port's one SQ."""
    sqs = device_counters(p)["sqs"]
    expect(len(sqs) == 1, f"expected one SQ in the emulator, found {sqs}", p)
    return sqs[0]


def one_burst(p, wqes_before):
    """Sends exactly one burst of BURST frames (io forwarding receives nothing on a null wire) and
    waits until the emulator has consumed its WQEs, so that the next burst's reclaim sees every
    CQE written for it."""
    command(p, "start tx_first", done=r"packet forwarding packets/burst=")
    command(p, "stop")
    harness.repeat_until(lambda: sq_counters(p)["wqes"], lambda n: n == wqes_before + BURST,
                         f"the emulator to consume {wqes_before + BURST} TX WQEs", timeout=60)
    return wqes_before + BURST


def run_with_offset_unit(unit):
    p = testpmd_on_emu(["--ports", "1", "--wire", "null", "--hw", f"tx-wqe-offset={unit}"],
                       "mana-txclog", ["-i", "--forward-mode=io", "--rxq=1", "--txq=1",
                                       f"--burst={BURST}", "--txd=256", "--mbcache=0",
                                       "--eth-peer=0,02:00:00:00:00:02"], interactive=True)
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    wqes = one_burst(p, 0)
    held = in_use(p)  # the RX ring and the last burst, not yet reclaimed
    reply = emu_ctl(p, "fault", "0", "0", "tx", "error-cqe", "33", str(FAULTS), "skip", "3",
                    "every", "4")
    expect(reply == "ok fault armed", f"fault not armed: {reply}", p)
    for _ in range(4):  # two bursts with faults, then clean ones whose reclaim sees every CQE
        wqes = one_burst(p, wqes)
    sq = sq_counters(p)
    # Burst 1: one CQE; bursts 2, 3: two error CQEs each (middle and end); bursts 4, 5: one each.
    expect(sq["error_cqes"] == FAULTS and sq["cqes"] == 1 + 2 * 2 + 2,
           f"emulator CQEs {sq['cqes']} ({sq['error_cqes']} errors), expected 7 ({FAULTS})", p)
    now = in_use(p)
    expect(now == held, f"tx-wqe-offset={unit}: {now - held} mbufs more held by the port after "
           f"{FAULTS} TX error completions ({now} in use, {held} before): descriptors never "
           f"completed", p)
    stats = show_port_stats(p, last_port=0)[0]
    expect(stats.get("TX-errors") == FAULTS,
           f"TX-errors {stats.get('TX-errors')}, expected {FAULTS}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_error_at_burst_end_offset_in_basic_units():
    run_with_offset_unit("bu")


def test_error_at_burst_end_offset_in_bytes():
    run_with_offset_unit("bytes")


if __name__ == "__main__":
    harness.main([test_error_at_burst_end_offset_in_basic_units,
                  test_error_at_burst_end_offset_in_bytes])
