#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ethdev operations beyond forwarding: RX-missed (imissed) and its xstat from the kernel's netdev
counter of the VF, 0 while the netdev is down as on Azure (doc/hardware.md §2.11); dev_reset (`port
reset`) after a removal the port did not recover from, and on a healthy port; the calls the driver
does not offer (doc/guide.md) refused without changing the port."""

import re
import time

from emulator import device_port, live
import harness
from harness import EMU_BDF, emu_ctl, emu_mac, expect, repeat_until, testpmd_on_emu
from launch import looped_txonly
from testpmd_cli import command, show_port_stats, xstats

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool, measured 370 MB.
HUGEPAGES_MB = 512

# The emulator refreshes the netdev counter every 2 s, as the kernel does: a bound with margin.
REFRESH_TIMEOUT = 30


def drop_some(p, at_least):
    """Sends until the device counted `at_least` more no-WQE drops, stops, and returns the
    device's total once it no longer moves."""
    start = device_port(p)["rx_no_wqe_drops"]
    command(p, "start", r"^Logical Core")
    repeat_until(lambda: (time.sleep(0.05), device_port(p)["rx_no_wqe_drops"])[1],
                 lambda v: v >= start + at_least, f"{at_least} no-WQE drops", timeout=60)
    command(p, "stop")
    last = [None]

    def settled(v):
        done = v == last[0]
        last[0] = v
        return done

    return repeat_until(lambda: (time.sleep(0.1), device_port(p)["rx_no_wqe_drops"])[1], settled,
                        "the device's drop counter to stop moving", timeout=30)


def missed(p):
    return show_port_stats(p, last_port=0)[0]["RX-missed"]


def test_rx_missed_stays_0_while_the_netdev_is_down():
    """On Azure a DPDK port's netdev is down, and the kernel fills rx_missed_errors only while it is
    up (doc/hardware.md §2.11): RX-missed and the xstat hc_rx_discards_no_wqe read 0 although the
    NIC dropped frames, and the driver says why once. With the netdev up (`netdev 0 0 up`) the same
    file shows the device's drops once the emulator's 2 s refresh ran (the driver reads it), and
    down again it reads 0 again."""
    p = looped_txonly("ethdev-missed")
    drops = drop_some(p, 10000)
    expect(missed(p) == 0 and xstats(p).get("hc_rx_discards_no_wqe") == 0,
           f"RX-missed {missed(p)} with the netdev down, device drops {drops}", p)
    emu_ctl(p, "netdev", "0", "0", "up")
    repeat_until(lambda: (time.sleep(0.2), missed(p))[1], lambda v: v == drops,
                 f"RX-missed to reach the device's {drops} drops with the netdev up",
                 timeout=REFRESH_TIMEOUT)
    expect(xstats(p).get("hc_rx_discards_no_wqe") == drops, f"xstats: {xstats(p)}", p)
    emu_ctl(p, "netdev", "0", "0", "down")
    repeat_until(lambda: (time.sleep(0.2), missed(p))[1], lambda v: v == 0,
                 "RX-missed back to 0 with the netdev down again", timeout=REFRESH_TIMEOUT)
    said = [line for line in p.lines if "imissed counts no NIC drops while" in line]
    expect(len(said) == 1, f"the driver's note on imissed: {said}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def traffic_flows(p):
    """Forwarding sends: the device's TX frame count grows by 10000 within a bounded wait."""
    start = device_port(p)["tx_frames"]
    command(p, "start", r"^Logical Core")
    repeat_until(lambda: (time.sleep(0.05), device_port(p)["tx_frames"])[1],
                 lambda v: v >= start + 10000, "10000 frames sent after the reset", timeout=60)
    command(p, "stop")


def reset(p):
    command(p, "port stop 0")
    mark = len(p.lines)
    p.send("port reset 0")
    p.wait_for(r"^\s*Done\.?\s*$|Failed to reset port", start=mark)
    expect(re.search(r"^\s*Done", p.lines[p.last_index]), "port reset failed", p)
    mark = len(p.lines)
    p.send("port start 0")
    p.wait_for(r"^\s*Done\.?\s*$|Fail", start=mark)
    expect(re.search(r"^\s*Done", p.lines[p.last_index]), "port start after the reset failed", p)


def reset_after_removal(prefix, timeout, failed, reset_while_away=False):
    """The VF removed with recovery_timeout=`timeout` and the port left failed (log line `failed`);
    once the VF is back, `port stop`, `port reset`, `port start` make it send again with the verbs
    objects of a started port (as before the removal), and a stopped port's after `port stop`."""
    # testpmd's own removal handling (closing the port) off: the application resets the port.
    p = looped_txonly(prefix, ["-a", f"{EMU_BDF},recovery_timeout={timeout}"],
                      opts=["--no-rmv-interrupt"])
    command(p, "start", r"^Logical Core")
    started = live(p)
    command(p, "stop")
    command(p, "port stop 0")
    stopped = live(p)
    command(p, "port start 0")
    mark = len(p.lines)
    emu_ctl(p, "remove", "0")
    p.wait_for(failed, start=mark, timeout=30)
    if reset_while_away:
        command(p, "port stop 0")
        mark = len(p.lines)
        p.send("port reset 0")
        p.wait_for(r"reset: no usable VF with MAC 00:0D:3A:00:00:01 is there", start=mark)
        p.wait_for(r"Failed to reset port 0", start=mark)
    expect(emu_ctl(p, "add", "0") == "ok VF 0 added", "add refused", p)
    reset(p)
    expect(live(p) == started, f"objects after reset and start: {live(p)}, before: {started}", p)
    traffic_flows(p)
    command(p, "port stop 0")
    expect(live(p) == stopped, f"objects after stop: {live(p)}, a stopped port's: {stopped}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)
    expect("mana-emu:" not in p.output(), "the emulator complained", p)


def test_reset_after_removal_without_recovery():
    """recovery_timeout=0: the old objects are still there (of a dead context) when reset runs."""
    reset_after_removal("ethdev-reset-rmv", 0, r"recovery_timeout=0: the port stays stopped")


def test_reset_after_failed_recovery():
    """recovery_timeout=1 ran out: the old objects were destroyed by the recovery already. A reset
    while the VF is still away fails, saying why."""
    reset_after_removal("ethdev-reset-fail", 1, r"came back within recovery_timeout=1 s",
                        reset_while_away=True)


def test_reset_of_a_healthy_port():
    """dev_reset on a working port re-opens the device: configure and start work again, the port
    sends, and a stopped port holds the same verbs objects as before the reset."""
    p = looped_txonly("ethdev-reset")
    traffic_flows(p)
    command(p, "port stop 0")
    stopped = live(p)
    reset(p)
    traffic_flows(p)
    command(p, "port stop 0")
    expect(live(p) == stopped, f"objects after the reset: {live(p)}, before: {stopped}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_allmulticast_is_what_the_vport_does():
    """The vPort delivers multicast frames (no filter to program): the port reports all-multicast
    on, turning it off fails, and frames to a multicast MAC go from one port to the other."""
    peers = ["--eth-peer=0,01:00:5e:00:00:01", "--eth-peer=1,01:00:5e:00:00:02"]
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair"], "ethdev-allmulti",
                       ["-i", "--forward-mode=mac", *peers], interactive=True, lcores="2@0,3@1")
    p.wait_for(rf"Port 1: {emu_mac(1).upper()}")
    mark = len(p.lines)
    p.send("show port info 0")
    expect(p.wait_for(r"Allmulticast mode:\s+(\w+)", start=mark).group(1) == "enabled",
           "all-multicast not reported on", p)
    mark = len(p.lines)
    p.send("set allmulti 0 off")
    p.wait_for(r"all-multicast cannot be turned off", start=mark)
    mark = len(p.lines)
    p.send("show port info 0")
    expect(p.wait_for(r"Allmulticast mode:\s+(\w+)", start=mark).group(1) == "enabled",
           "all-multicast off after a refused disable", p)
    command(p, "start tx_first", r"^Logical Core")
    repeat_until(lambda: show_port_stats(p),
                     lambda s: all(s[q].get("RX-packets", 0) > 1000 for q in (0, 1)),
                     "both ports to receive multicast frames", timeout=60)
    command(p, "stop")
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


# Calls the vPort has no use for (doc/guide.md "Calls the driver does not offer"): the testpmd
# command and the answer it prints, in the guide's order.
REFUSED = [
    ("set promisc 0 on",
     r"Error during enabling promiscuous mode for port 0: Operation not supported"),
    ("mac_addr set 0 02:00:00:00:00:09", r"mac_addr_cmd error: \(Operation not supported\)"),
    ("mac_addr add 0 02:00:00:00:00:0a", r"mac_addr_cmd error: \(Operation not supported\)"),
    ("mcast_addr add 0 01:00:5e:00:00:05", r"set_mc_addr_list\(port=0, nb=1\) failed\. diag=-95"),
    ("rx_vlan add 5 0", r"vlan_filter\(port_pi=0, vlan_id=5, on=1\) failed diag=-38"),
    ("set flow_ctrl rx on tx on 0 0 0 0 mac_ctrl_frame_fwd off autoneg off 0",
     r"bad flow control parameter, return code = -95"),
    ("show port 0 flow_ctrl", r"Failed to get current flow ctrl information: err = -95"),
    ("set link-down port 0", r"Set link down fail"),
    ("set link-up port 0", r"Set link up fail"),
    ("flow create 0 ingress pattern eth / end actions drop / end", r"Function not implemented"),
    ("show port 0 eeprom", r"operation not supported by device"),
    ("show port 0 module_eeprom", r"operation not supported by device"),
]


def test_unsupported_calls_are_refused_and_change_nothing():
    """Every call the guide lists as not offered answers its error, and the port is as before: own
    MAC, promiscuous off, link up, and it still sends."""
    p = looped_txonly("ethdev-refused")
    for line, answer in REFUSED:
        mark = len(p.lines)
        p.send(line)
        p.wait_for(answer, start=mark)
    mark = len(p.lines)
    p.send("show port 0 rx_offload capabilities")
    p.wait_for(r"^\s*Per Port\s*:(.*)$", start=mark)
    expect("TCP_LRO" not in p.lines[p.last_index], "LRO offered", p)
    mark = len(p.lines)
    p.send("show port info 0")
    p.wait_for(r"^Promiscuous mode:\s+disabled", start=mark)
    p.wait_for(r"^MAC address: " + emu_mac(0).upper(), start=mark)
    p.wait_for(r"^Link status: up", start=mark)
    traffic_flows(p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_rx_missed_stays_0_while_the_netdev_is_down,
                  test_reset_after_removal_without_recovery, test_reset_after_failed_recovery,
                  test_reset_of_a_healthy_port,
                  test_allmulticast_is_what_the_vport_does,
                  test_unsupported_calls_are_refused_and_change_nothing])
