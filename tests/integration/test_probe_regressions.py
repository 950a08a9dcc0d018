#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What an adversarial probe found, through testpmd's prompt on the emulator: descriptor status and the
used-descriptor count of a queue that was never set up answer (doc/guide.md "Queues at run time")
instead of crashing testpmd; queue starts, a reset and an MTU asked for while the VF is removed
(doc/guide.md "VF removal and recovery"); an MTU set on a started port."""

from emulator import netdev_mtu
import harness
from harness import emu_ctl, emu_mac, expect, testpmd_on_emu
from testpmd_cli import command, run, show

# One testpmd with its default mbuf pool (about 370 MB): hugepages.py.
HUGEPAGES_MB = 512

PORT = emu_mac(0).upper()


RECOVERING = r"Port 0: error recovering event"
RECOVERED = r"Port 0: error recovery successful event"


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
    # (testpmd 24.11 and later check the queue id first: "Invalid input: port id = 0, queue id = 7")
    checked_first = r"|Invalid input: port id = 0, queue id = {}"
    commands = {
        "show port 0 rxq 7 desc 0 status": r"Invalid input: queue id = 7, desc id = 0" + checked_first.format(7),
        "show port 0 txq 7 desc 0 status": r"Invalid input: queue id = 7, desc id = 0" + checked_first.format(7),
        "show port 0 rxq 7 desc used count": r"Invalid queueid = 7" + checked_first.format(7),
        "show port 0 rxq 2 desc 0 status": r"Invalid input: queue id = 2, desc id = 0" + checked_first.format(2),
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


def remove_vf(p):
    mark = len(p.lines)
    expect(emu_ctl(p, "remove", "0") == "ok VF 0 removed", "remove refused", p)
    p.wait_for(RECOVERING, start=mark)


def add_vf(p):
    mark = len(p.lines)
    expect(emu_ctl(p, "add", "0") == "ok VF 0 added", "add refused", p)
    p.wait_for(RECOVERED, start=mark, timeout=30)


def queue_state(p, kind, queue):
    info = show(p, f"show {kind}q info 0 {queue}", r"Burst mode:")
    return "started" if f"queue state: started" in info else "stopped"


def test_queue_started_while_the_vf_is_removed():
    """RX and TX queue 1 stopped, the VF removed, queue 1 started (and TX queue 0 stopped) during
    the recovery: after it the queue states are those asked for, and the gates follow them: the
    started RX queue's descriptors are posted (AVAILABLE), the stopped TX queue's are not
    looked at (UNAVAILABLE)."""
    p = two_queue_testpmd("mana-probe-qstart", ["--no-rmv-interrupt"])
    for kind in ("rx", "tx"):
        run(p, f"port 0 {kind}q 1 stop")
        expect(queue_state(p, kind, 1) == "stopped", f"{kind} queue 1 did not stop", p)
    remove_vf(p)
    for line in ("port 0 rxq 1 start", "port 0 txq 1 start"):
        out = run(p, line)
        kind = line.split()[2][:2].upper()
        expect(f"{kind} queue 1 starts when the VF is back" in out, f"{line}: {out}", p)
    run(p, "port 0 txq 0 stop")
    add_vf(p)
    states = {(k, q): queue_state(p, k, q) for k in ("rx", "tx") for q in (0, 1)}
    want = {("rx", 0): "started", ("rx", 1): "started", ("tx", 0): "stopped",
            ("tx", 1): "started"}
    expect(states == want, f"queue states after the recovery {states}, asked for {want}", p)
    for line, status in (("show port 0 rxq 1 desc 0 status", "AVAILABLE"),
                         ("show port 0 txq 1 desc 0 status", "DONE"),
                         ("show port 0 txq 0 desc 0 status", "UNAVAILABLE")):
        out = show(p, line, r"Desc status = ")
        expect(f"Desc status = {status}" in out, f"{line}: {out}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_reset_of_a_stopped_port_while_the_vf_is_removed():
    """port stop, remove, port reset (refused: the port recovers by itself), add: the recovery
    still completes and the port starts."""
    p = two_queue_testpmd("mana-probe-reset", ["--no-rmv-interrupt"])
    command(p, "port stop 0")
    remove_vf(p)
    out = run(p, "port reset 0")
    expect("no reset is needed: the port recovers by itself when it is back" in out,
           f"port reset 0: {out}", p)
    add_vf(p)
    mark = len(p.lines)
    p.send("port start 0")
    p.wait_for(rf"Port 0: {PORT}", start=mark)
    expect(not any("did not come back" in line for line in p.lines[mark:]), "start refused", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_mtu_set_while_started_and_while_the_vf_is_removed():
    """On a started port the MTU goes to the netdev and one line says the NIC may take it only at
    the next start. While the VF is removed it is kept, one line says so (not the CAP_NET_ADMIN
    hint of a failed write), and the VF that comes back gets it."""
    p = two_queue_testpmd("mana-probe-mtu", ["--no-rmv-interrupt"])
    out = run(p, "port config mtu 0 1400")
    expect("MTU 1400 is set on netdev" in out and "only from the next port start" in out,
           f"port config mtu 0 1400 while started: {out}", p)
    expect(netdev_mtu(p) == 1400, f"netdev MTU {netdev_mtu(p)}", p)
    remove_vf(p)
    out = run(p, "port config mtu 0 1300")
    expect("the VF is removed: MTU 1300 is kept" in out and "CAP_NET_ADMIN" not in out and
           "Set MTU failed" not in out, f"port config mtu 0 1300 while removed: {out}", p)
    add_vf(p)
    expect(netdev_mtu(p) == 1300, f"netdev MTU after the recovery: {netdev_mtu(p)}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_descriptor_status_of_a_queue_never_set_up,
                  test_queue_started_while_the_vf_is_removed,
                  test_reset_of_a_stopped_port_while_the_vf_is_removed,
                  test_mtu_set_while_started_and_while_the_vf_is_removed])
