#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What issue 19's probe found, through testpmd's prompt on the emulator: descriptor status and the
used-descriptor count of a queue that was never set up answer (doc/guide.md "Queues at run time")
instead of crashing testpmd."""

import harness
from harness import emu_mac, expect, testpmd_on_emu
from test_queue_control import show

PORT = emu_mac(0).upper()


def two_queue_testpmd(prefix, opts=()):
    p = testpmd_on_emu(["--ports", "1"], prefix, ["-i", "--rxq=2", "--txq=2", *opts],
                       interactive=True)
    p.wait_for(rf"Port 0: {PORT}")
    return p


def expect_alive(p, after):
    """testpmd still answers at its prompt."""
    info = show(p, "show port info 0", r"^Device error handling mode: ")
    expect(f"MAC address: {PORT}" in info, f"testpmd gone after {after!r}: {info}", p)


def test_descriptor_status_of_a_queue_never_set_up():
    """Queue ids 7 and 2 of a port with 2 queues, started and stopped: testpmd prints DPDK's
    answer for a bad queue (ENODEV for the descriptor status, EINVAL for the count) and lives."""
    p = two_queue_testpmd("mana-probe-desc")
    commands = {
        "show port 0 rxq 7 desc 0 status": r"Invalid input: queue id = 7, desc id = 0",
        "show port 0 txq 7 desc 0 status": r"Invalid input: queue id = 7, desc id = 0",
        "show port 0 rxq 7 desc used count": r"Invalid queueid = 7",
        "show port 0 rxq 2 desc 0 status": r"Invalid input: queue id = 2, desc id = 0",
    }
    for state in ("started", "stopped"):
        for line, answer in commands.items():
            out = show(p, line, answer)
            expect("Desc status" not in out and "Used desc count" not in out,
                   f"port {state}: {line}: {out}", p)
            expect_alive(p, line)
        if state == "started":
            show(p, "port stop 0", r"^Done|Stopping ports")
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_descriptor_status_of_a_queue_never_set_up])
