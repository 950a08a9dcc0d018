#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Servicing under DPDK's net_netvsc (doc/guide.md "Under DPDK's netvsc PMD", "Servicing, case by
case"): the VF removed and added again around what an application does to the netvsc port.
testpmd forwards over a netvsc port from DPDK 23.11 on; these run with Debian 13's DPDK 24.11
(scripts/test-dpdk.sh 24.11) and are not defined in a 22.11 build.

- An MTU set on the netvsc port, then servicing, with the data path on the VF at the removal and
  with the VF removed while the port is stopped: net_netvsc sets its MTU on the VF it adds again,
  our port takes it although its RX buffers are shorter (one warning), and the data path is back
  on the VF each time.
- A removal that lands while the netvsc port starts: our start does not fail for it (a failure
  left net_netvsc's port stopped and the VF lost), our lines name the owner that handles the
  removal (never "recovers by itself"), and once forwarding runs the data path is back on the VF
  after the add.
- A VF removed and added while the netvsc port is stopped: net_netvsc listens to PCI hot-add
  events only while started, so nothing probes the VF again; traffic stays on the synthetic path
  and our objects are all freed.
- mbufs after txonly and close: what stays in use is exactly what net_netvsc's RX staging ring
  held (frames its synthetic path received, never polled), none of ours.
- recovery_timeout=0 under net_netvsc: the removal line says what the owner does, and the VF is
  back after the add."""

import re
import time

from emulator import (device_port, live, netdev_mtu, netvsc_counters, removal_answered,
                      removal_begun)
import harness
from harness import emu_ctl, expect
from launch import SENDER
from netvsc import (HOTPLUG_LINE, NETVSC_PORT, needs_forwarding_testpmd, netvsc_testpmd,
                    netvsc_xstats, stop_forwarding)
from testpmd_cli import command, mbufs_in_use

# Hugepages its DPDK processes take at their peak (hugepages.py): one testpmd of -m 256.
HUGEPAGES_MB = 256

TX_PPS = ["--tx-pps", "200000"]  # keeps the loaded 2-core machine responsive
OLD_LINE = "recovers by itself"  # our line for an application's own port, wrong under an owner
OWNER_LINE = "the port's owner"


def data_path(p, vf, what):
    """Waits (bounded) for the host to have the data path on the VF (or not); a timeout shows
    testpmd's output with the host's counters."""
    try:
        harness.repeat_until(lambda: netvsc_counters(p), lambda c: c["data_path_vf"] == vf,
                             f"the data path on the {'VF' if vf else 'synthetic NIC'} {what}",
                             timeout=30)
    except harness.Failure as e:
        expect(False, str(e), p)


def on_vf(p, what):
    data_path(p, 1, what)


def on_synthetic(p, what):
    data_path(p, 0, what)


def vf_sends(p, what, frames=2000):
    """The VF's TX counter grows by `frames` (testpmd forwards through it)."""
    before = device_port(p)["tx_frames"]
    harness.repeat_until(lambda: device_port(p)["tx_frames"], lambda n: n >= before + frames,
                         f"{frames} frames sent through the VF {what}", timeout=30)


def remove(p, cycle):
    expect(emu_ctl(p, "remove", "0") == "ok VF 0 removed", f"{cycle}: remove", p)


def add(p, cycle, mark):
    expect(emu_ctl(p, "add", "0") == "ok VF 0 added", f"{cycle}: add", p)
    p.wait_for(HOTPLUG_LINE, start=mark, timeout=30)


def quit_with_vf_mtu(p, mtu):
    """The VF's netdev has `mtu`; forwarding stops and testpmd quits cleanly."""
    expect(netdev_mtu(p) == mtu, f"the VF's netdev MTU: {netdev_mtu(p)}, expected {mtu}", p)
    stop_forwarding(p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


@needs_forwarding_testpmd
def test_mtu_set_then_servicing_keeps_the_vf():
    """`port config mtu 1 4000` on the stopped netvsc port (net_netvsc 24.11.8 keeps a stopped
    port's data path synthetic, so the VF is not asked), then servicing: net_netvsc adds the VF
    again with MTU 4000, which our 2048-byte RX buffers do not hold. Before, our port refused it
    ("Failed to set VF MTU") and the data path stayed synthetic for good."""
    p = netvsc_testpmd(SENDER, "loop", "mana-nvsv-mtu", ["--forward-mode=txonly"], emu_opts=TX_PPS)
    command(p, f"port stop {NETVSC_PORT}", r"^Done")
    mark = len(p.lines)
    p.send(f"port config mtu {NETVSC_PORT} 4000")
    p.wait_for(r"RNDIS MTU is 4000", start=mark, timeout=60)
    command(p, f"port start {NETVSC_PORT}", r"^Done")
    on_vf(p, "after the MTU change")
    command(p, "start", r"txonly packet forwarding")
    vf_sends(p, "before servicing")

    # Servicing with the data path on the VF.
    mark = len(p.lines)
    remove(p, "on the VF")
    on_synthetic(p, "after the removal")
    add(p, "on the VF", mark)
    on_vf(p, "after servicing with the port started")
    vf_sends(p, "after servicing with the port started")
    p.wait_for(r"MTU 4000 from the port's owner .* rx_cqe_truncated_errors", start=mark)
    out = p.lines[mark:]
    expect(not any("Failed to set VF MTU" in line or "Failed to add VF" in line for line in out),
           "net_netvsc could not add the VF again", p)
    warned = [line for line in out if "MTU 4000 from the port's owner" in line]
    expect(len(warned) == 1, f"one warning about the short RX buffers: {warned}", p)
    expect(netdev_mtu(p) == 4000, f"the VF's netdev MTU: {netdev_mtu(p)}", p)

    # Servicing with the data path not on the VF: removed while the port is stopped, added once
    # it runs again (net_netvsc hears the hot-add only while started).
    stop_forwarding(p)
    command(p, f"port stop {NETVSC_PORT}", r"^Done")
    mark = len(p.lines)
    remove(p, "stopped")
    p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
    command(p, f"port start {NETVSC_PORT}", r"^Done")
    # Forwarding (synthetic) polls the channel, where net_netvsc 24.11 reads the host's VF note
    # that makes it take the VF it probed again.
    command(p, "start", r"txonly packet forwarding")
    add(p, "stopped, then started", mark)
    on_vf(p, "after servicing with the port stopped")
    vf_sends(p, "after servicing with the port stopped")
    p.wait_for(r"MTU 4000 from the port's owner", start=mark)
    expect(not any("Failed to set VF MTU" in line for line in p.lines[mark:]),
           "net_netvsc could not set the MTU on the VF", p)
    quit_with_vf_mtu(p, 4000)


@needs_forwarding_testpmd
def test_mtu_at_start_is_taken_as_after_servicing():
    """The same answer at configuration time: `--max-pkt-len` gives the netvsc port MTU 4000,
    which reaches our port through net_netvsc's configure of its VF; our RX queue setup takes the
    short buffers for the owner (before, it refused, and testpmd under net_netvsc crashed)."""
    p = netvsc_testpmd(SENDER, "loop", "mana-nvsv-mtu-start",
                       ["--forward-mode=txonly", "--max-pkt-len=4018"], emu_opts=TX_PPS)
    command(p, "start", r"txonly packet forwarding")
    vf_sends(p, "with MTU 4000 from the start")
    warned = [line for line in p.lines if "MTU 4000 from the port's owner" in line]
    expect(len(warned) == 1, f"one warning about the short RX buffers (one start): {warned}", p)
    quit_with_vf_mtu(p, 4000)


@needs_forwarding_testpmd
def test_removal_during_port_start():
    """The VF removed 0 to 50 ms into `port start` of the netvsc port, then `start`, then the VF
    added again. Whether our start ran before, during or after the removal, the netvsc port
    starts: our start, overtaken by the removal, succeeds with bursts returning 0 (before, it
    failed, net_netvsc's port stayed stopped, never heard the hot-add, and the VF was lost); no
    line of ours tells the user to wait for a recovery event (the owner closes our port); and
    with forwarding running, net_netvsc takes the VF it probes again: the data path is back on
    the VF and traffic goes through it."""
    p = netvsc_testpmd(SENDER, "loop", "mana-nvsv-start", ["--forward-mode=txonly"], emu_opts=TX_PPS)
    overtaken = 0
    for delay_ms in (0, 10, 20, 30, 40, 50):
        cycle = f"removal {delay_ms} ms into port start"
        command(p, f"port stop {NETVSC_PORT}", r"^Done")
        mark = len(p.lines)
        p.send(f"port start {NETVSC_PORT}")
        time.sleep(delay_ms / 1000)  # where the removal lands in the start: the point of the test
        remove(p, cycle)
        p.wait_for(r"^Done|Fail to start port", start=mark, timeout=30)
        p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
        expect(not any("Fail to start port" in line for line in p.lines[mark:]),
               f"{cycle}: the netvsc port did not start", p)
        overtaken += any("started while the VF is removed" in line for line in p.lines[mark:])
        command(p, "start", r"txonly packet forwarding")
        add(p, cycle, mark)
        on_vf(p, f"after the {cycle}")
        vf_sends(p, f"after the {cycle}", frames=1000)
        stop_forwarding(p)
        ours = [line for line in p.lines[mark:] if line.startswith("net_mana:")]
        expect(not any(OLD_LINE in line for line in ours),
               f"{cycle}: a line of ours tells the user to wait for our recovery: {ours}", p)
        expect(all(OWNER_LINE in line for line in ours if "the VF is removed" in line or
                   "the VF was removed" in line),
               f"{cycle}: a removal line of ours does not name the owner: {ours}", p)
    print(f"the removal overtook our start in {overtaken} of 6 cycles", flush=True)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


@needs_forwarding_testpmd
def test_removal_event_late_in_port_start():
    """The case above made certain: with `--hw fatal-event-delay-ms=800` the VF's contexts answer
    EIO at `remove` and its removal event, and the host's VF note to net_netvsc after it, come
    800 ms later (an interrupt thread late to read the event, doc/hardware.md §2.7). `port start`
    in between reaches our start while nothing has heard of the removal: our start waits for the
    event and succeeds with bursts returning 0, the netvsc port starts, and once forwarding runs
    the data path is back on the VF after the add."""
    p = netvsc_testpmd(SENDER, "loop", "mana-nvsv-late-event", ["--forward-mode=txonly"],
                       emu_opts=[*TX_PPS, "--hw", "fatal-event-delay-ms=800"])
    command(p, f"port stop {NETVSC_PORT}", r"^Done")
    mark = len(p.lines)
    removal = removal_begun(p)
    p.send(f"port start {NETVSC_PORT}")
    p.wait_for(r"^Done|Fail to start port", start=mark, timeout=30)
    removal_answered(p, removal)
    p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
    ours = [line for line in p.lines[mark:] if line.startswith("net_mana:")]
    expect(not any("Fail to start port" in line for line in p.lines[mark:]),
           f"the netvsc port did not start: {ours}", p)
    expect(any("started while the VF is removed" in line for line in ours),
           f"our start did not meet the removal: {ours}", p)
    expect(not any("kernel interface" in line or OLD_LINE in line for line in ours),
           f"a false vPort line or our recovery's advice: {ours}", p)
    command(p, "start", r"txonly packet forwarding")
    add(p, "late removal event", mark)
    on_vf(p, "after the add")
    vf_sends(p, "after the add", frames=1000)
    stop_forwarding(p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


@needs_forwarding_testpmd
def test_vf_back_while_stopped_is_not_probed_again():
    """The VF removed and added while the netvsc port is stopped: the kernel sends one PCI
    hot-add event per device (doc/hardware.md §11.12), and net_netvsc listens for it only while
    its port is started, so nothing probes the VF again. What a user sees (doc/guide.md): the
    port starts on the synthetic path and forwards there; our port is closed and every verbs
    object of the VF is freed."""
    p = netvsc_testpmd(SENDER, "loop", "mana-nvsv-stopped", ["--forward-mode=txonly"], emu_opts=TX_PPS)
    command(p, f"port stop {NETVSC_PORT}", r"^Done")
    mark = len(p.lines)
    remove(p, "stopped")
    p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
    expect(emu_ctl(p, "add", "0") == "ok VF 0 added", "add", p)
    command(p, f"port start {NETVSC_PORT}", r"^Done")
    before, vf_before = netvsc_counters(p)["tx_packets"], device_port(p)["tx_frames"]
    command(p, "start", r"txonly packet forwarding")
    # Forwarding polls the channel: net_netvsc reads the host's VF note and finds no port for it.
    p.wait_for(r"hn_vf_attach\(\): Couldn't find port for VF", start=mark, timeout=30)
    harness.repeat_until(lambda: netvsc_counters(p)["tx_packets"], lambda n: n >= before + 2000,
                         "2000 frames on the synthetic path", timeout=30)
    stop_forwarding(p)
    c, vf = netvsc_counters(p), device_port(p)
    expect(c["data_path_vf"] == 0 and vf["tx_frames"] == vf_before,
           f"frames through the VF: {vf['tx_frames'] - vf_before}; host: {c}", p)
    expect(not any(re.search(HOTPLUG_LINE, line) for line in p.lines[mark:]),
           "net_netvsc probed the VF again", p)
    objects = live(p)
    expect(all(v == 0 for v in objects.values()), f"verbs objects of the VF left: {objects}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


@needs_forwarding_testpmd
def test_mbufs_left_after_close_are_net_netvscs():
    """txonly over the loop wire: while the VF is away the frames come back on the synthetic
    path, and net_netvsc stages them in its RX ring, which txonly never polls; closing the port
    frees that ring but not the mbufs in it (hn_rx_queue_free). What stays in use after stop and
    close is exactly what the ring held (rx_q0_good_packets less rx_q0_ring full), none of ours."""
    prefix = "mana-nvsv-mbufs"
    # Frames to the port's own MAC, so that the loop wire brings them back to it: to our RX queue
    # while the data path is on the VF, to net_netvsc's while it is not.
    p = netvsc_testpmd(SENDER, "loop", prefix,
                       ["--forward-mode=txonly", f"--eth-peer={NETVSC_PORT},{SENDER['mac']}"],
                       emu_opts=TX_PPS)
    command(p, f"port stop {NETVSC_PORT}", r"^Done")
    baseline = mbufs_in_use(prefix)
    command(p, f"port start {NETVSC_PORT}", r"^Done")
    on_vf(p, "after port start")
    command(p, "start", r"txonly packet forwarding")
    mark = len(p.lines)
    remove(p, "txonly")
    on_synthetic(p, "after the removal")
    harness.repeat_until(lambda: netvsc_xstats(p)[0].get("rx_q0_good_packets", 0), lambda n: n >= 1000,
                         "1000 frames received on the synthetic path", timeout=30)
    add(p, "txonly", mark)
    on_vf(p, "after the add")
    stop_forwarding(p)
    command(p, f"port stop {NETVSC_PORT}", r"^Done")
    xs, _ = netvsc_xstats(p)
    staged = xs["rx_q0_good_packets"] - xs["rx_q0_ring full"]
    command(p, f"port close {NETVSC_PORT}", r"^Done")
    left = mbufs_in_use(prefix) - baseline
    expect(left == staged,
           f"{left} mbufs in use after close, net_netvsc's RX ring held {staged} ({xs})", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


@needs_forwarding_testpmd
def test_recovery_timeout_zero_under_netvsc():
    """recovery_timeout=0 turns our own recovery off; under net_netvsc the owner handles the
    removal anyway: the line says so (not "the port stays stopped: close it, or reset it"), and
    the VF is back on the data path after the add."""
    p = netvsc_testpmd(SENDER, "loop", "mana-nvsv-rt0", ["--forward-mode=txonly"], emu_opts=TX_PPS,
                       devargs=",recovery_timeout=0")
    command(p, "start", r"txonly packet forwarding")
    mark = len(p.lines)
    remove(p, "recovery_timeout=0")
    p.wait_for(r"net_mana: port 0 .*the VF was removed", start=mark, timeout=30)
    line = p.lines[p.last_index]
    expect("recovery_timeout=0" in line and OWNER_LINE in line and "stays stopped" not in line,
           f"the removal line: {line}", p)
    add(p, "recovery_timeout=0", mark)
    on_vf(p, "after the add")
    vf_sends(p, "after the add")
    stop_forwarding(p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


TESTS = [test_mtu_set_then_servicing_keeps_the_vf, test_mtu_at_start_is_taken_as_after_servicing,
         test_removal_during_port_start, test_removal_event_late_in_port_start,
         test_vf_back_while_stopped_is_not_probed_again,
         test_mbufs_left_after_close_are_net_netvscs, test_recovery_timeout_zero_under_netvsc]
if harness.NETVSC_HOT_ADD_DEADLOCKS:
    TESTS = harness.not_on_this_dpdk(
        TESTS, {"test_mtu_set_then_servicing_keeps_the_vf", "test_removal_during_port_start",
                "test_removal_event_late_in_port_start",
                "test_mbufs_left_after_close_are_net_netvscs", "test_recovery_timeout_zero_under_netvsc"},
        "it re-adds the VF under a started port, where its net_netvsc deadlocks (harness.py)")

if __name__ == "__main__":
    harness.main(TESTS)
