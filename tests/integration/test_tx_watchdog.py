#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The TX stall watchdog (doc/guide.md "TX stall watchdog"): testpmd sends on a loop wire, the
emulator's `fault 0 0 tx stall` makes the port's SQ stop completing, and the driver must notice it
after tx_stall_timeout (not before, and within one check period and a margin after), create the
queues again by itself, log one line, count exactly one reset in the xstat tx_stall_resets, and
sending must go on. Full-rate traffic (ring full all the time, completions flowing) and an idle
queue whose completions nobody reclaims must not count as stalls."""

import time

from emulator import device_port
import harness
from harness import EMU_BDF, emu_ctl, expect, repeat_until
from launch import looped_txonly
from testpmd_cli import command, xstats

# One testpmd with its default mbuf pool (about 370 MB): hugepages.py.
HUGEPAGES_MB = 512

TIMEOUT = 2  # devarg tx_stall_timeout (s); the watchdog looks every TIMEOUT / 4
PERIOD = TIMEOUT / 4
# Detection may lag the timeout by one check period; the margin covers a loaded 2-core machine
# (the alarm thread and the output pipe) and is still far below the kernel's 15 s.
DETECT_MARGIN = 3.0
STALL_LINE = r"TX queue 0 completed nothing for 2 s with packets waiting"


def tx_frames(p):
    return device_port(p)["tx_frames"]


def sends(p, frames, what):
    """Waits until the device sent `frames` more frames; returns its total."""
    start = tx_frames(p)
    return repeat_until(lambda: (time.sleep(0.05), tx_frames(p))[1], lambda v: v >= start + frames,
                        what, timeout=60)


def resets(p):
    return xstats(p).get("tx_stall_resets")


def test_a_stalled_sq_is_reset_once_and_tx_resumes():
    p = looped_txonly("tx-watchdog", eal_extra=["-a", f"{EMU_BDF},tx_stall_timeout={TIMEOUT}"])
    command(p, "start", r"^Logical Core")
    sends(p, 20000, "frames sent before the fault")
    # Full rate for more than the timeout: the ring is full at most bursts but completes.
    time.sleep(TIMEOUT + 2 * PERIOD)  # the window in which a false stall would be seen
    expect(resets(p) == 0, f"a reset under healthy full-rate traffic: {xstats(p)}", p)

    mark = len(p.lines)
    reply = emu_ctl(p, "fault", "0", "0", "tx", "stall")
    expect(reply == "ok fault armed", f"fault: {reply}", p)
    t0 = time.monotonic()
    p.wait_for(STALL_LINE, timeout=TIMEOUT + PERIOD + DETECT_MARGIN, start=mark)
    took = time.monotonic() - t0
    print(f"stall reported {took:.2f} s after the fault (tx_stall_timeout={TIMEOUT})")
    expect(took >= TIMEOUT - 0.1, f"stall reported after {took:.2f} s, before the timeout", p)
    expect("failed" not in p.lines[p.last_index], f"reset failed: {p.lines[p.last_index]}", p)
    sends(p, 20000, "frames sent after the watchdog's reset")
    # Traffic again for more than the timeout: the reset queues must not be reset again.
    time.sleep(TIMEOUT + 2 * PERIOD)  # the window in which a second reset would be seen
    expect(resets(p) == 1, f"tx_stall_resets {resets(p)}, expected 1", p)
    stalls = [line for line in p.lines[mark:] if "completed nothing" in line]
    expect(len(stalls) == 1, f"stall lines: {stalls}", p)

    # Idle with completions not reclaimed (nobody calls the burst): not a stall.
    command(p, "stop")
    time.sleep(TIMEOUT + 2 * PERIOD)  # the window in which an idle queue would be reset
    expect(resets(p) == 1, f"an idle queue was reset: tx_stall_resets {resets(p)}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_a_stalled_sq_is_reset_once_and_tx_resumes])
