#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The port's link as the kernel shows it (doc/hardware.md §9.24, doc/guide.md "Link status and
speed"): the speed the VF's netdev reports (`--hw link-speed-mbps`), 100G where it reports none;
a stopped port's link down; the NIC's link events (`mana-emu ctl link`) and a VF removal as link state change events in testpmd
(RTE_ETH_EVENT_INTR_LSC, testpmd's default --lsc-interrupt) and as its link status; the `mac=`
lookup with a synthetic interface of the same MAC (hv_netvsc's) beside the VF's renamed netdev; a
netdev renamed while the port runs, and while the VF is removed (`mana-emu ctl rename`)."""

from pathlib import Path

import harness
from harness import EMU_BDF, child_environ, emu_ctl, emu_mac, expect, testpmd_on_emu
from testpmd_cli import command

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time
# with its default mbuf pool, as test_ethdev_ops.py (measured 370 MB there).
HUGEPAGES_MB = 512

LSC = r"^Port 0: link state change event"
# The driver looks at the link every 250 ms (link_state.h): a bound with margin for a loaded machine.
EVENT_TIMEOUT = 20


def interactive(prefix, emu_opts=(), testpmd_opts=(), eal_extra=None):
    p = testpmd_on_emu(["--ports", "1", *emu_opts], prefix, ["-i", *testpmd_opts],
                       eal_extra=eal_extra, interactive=True, lcores="2@0,3@1")
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    return p


def port_info(p, key):
    """The value testpmd's `show port info 0` gives for `key` (e.g. "Link speed")."""
    lines = command(p, "show port info 0", rf"^{key}:")
    return lines[-1].split(":", 1)[1].strip()


def events(p):
    return sum(1 for line in p.lines if "Port 0: link state change event" in line)


def quit_testpmd(p):
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_speed_is_what_the_netdev_reports():
    """`Link speed` is the speed the kernel reports for the netdev (50000 Mbit/s here), and 100 Gbps
    where it reports none (-1, kernels before 6.17). The netdev is down, so the emulator answers
    its sysfs `speed` with EINVAL, as the kernel does: only the ethtool ioctl gives it."""
    for hw, shown in (("50000", "50 Gbps"), ("-1", "100 Gbps")):
        p = interactive(f"link-speed-{hw.strip('-')}", ["--hw", f"link-speed-mbps={hw}"])
        speed = port_info(p, "Link speed")
        expect(speed == shown, f"link-speed-mbps={hw}: Link speed {speed!r}, expected {shown}", p)
        expect(port_info(p, "Link status") == "up", "link down at start", p)
        quit_testpmd(p)


def test_a_kernel_before_6_19_keeps_the_link_up():
    """Before Linux 6.19 (`--hw link-events=off`) mana turns the carrier off with the netdev, so a
    DPDK port's (down) netdev reports carrier 0 over rtnetlink: that says nothing about the link,
    which reads up; the speed still comes from ethtool (sysfs answers EINVAL for a down netdev).
    The driver names its sources in one line."""
    p = interactive("link-before-6-19", ["--hw", "link-events=off"],
                    eal_extra=["-a", EMU_BDF, "--log-level=pmd.net.mana.driver:notice"])
    expect(port_info(p, "Link status") == "up", "carrier 0 of a down netdev taken as link down", p)
    expect(port_info(p, "Link speed") == "25 Gbps", "the speed not from ethtool", p)
    said = [line for line in p.lines if "so sysfs gives no speed or carrier" in line]
    expect(len(said) == 1 and "25000 Mbit/s" in said[0] and "taken as no news" in said[0],
           f"the driver's line on its link sources: {said}", p)
    quit_testpmd(p)


def test_link_events_reach_testpmd():
    """`mana-emu ctl link 0 down` turns the netdev's carrier off: testpmd prints one link state
    change event and shows the link down; `link 0 up`: one more event, link up. The port keeps its
    queues (a NIC link event is not a removal)."""
    p = interactive("link-events")
    expect(events(p) == 0, "a link state change event before any change", p)
    expect(emu_ctl(p, "link", "0", "down") == "ok link down", "ctl link down", p)
    p.wait_for(LSC, timeout=EVENT_TIMEOUT)
    expect(port_info(p, "Link status") == "down", "link not down after the link event", p)
    expect(port_info(p, "Link speed") == "None", "a speed while the link is down", p)
    expect(emu_ctl(p, "link", "0", "up") == "ok link up", "ctl link up", p)
    p.wait_for(LSC, timeout=EVENT_TIMEOUT, start=p.last_index + 1)
    expect(port_info(p, "Link status") == "up", "link not up after the link event", p)
    expect(events(p) == 2, f"{events(p)} link state change events for one down and one up", p)
    quit_testpmd(p)


def test_without_lsc_interrupt_the_status_still_follows():
    """With --no-lsc-interrupt the application gets no event, but the link it reads still follows
    the carrier (link_update reads it)."""
    p = interactive("link-no-lsc", testpmd_opts=["--no-lsc-interrupt"])
    emu_ctl(p, "link", "0", "down")
    harness.repeat_until(lambda: port_info(p, "Link status"), lambda v: v == "down",
                         "the link status to go down", timeout=EVENT_TIMEOUT)
    expect(events(p) == 0, "an event without --lsc-interrupt", p)
    quit_testpmd(p)


def test_a_stopped_port_has_its_link_down():
    """`port stop`: the link is down with no speed (the port passes nothing, as DTS's port_control
    expects); `port start`: up again at the netdev's speed. Neither raises a link state change
    event: the application stopped and started the port itself."""
    p = interactive("link-stop")
    command(p, "port stop 0")
    expect(port_info(p, "Link status") == "down", "link not down on a stopped port", p)
    expect(port_info(p, "Link speed") == "None", "a speed on a stopped port", p)
    command(p, "port start 0")
    expect(port_info(p, "Link status") == "up", "link not up after port start", p)
    expect(port_info(p, "Link speed") == "25 Gbps", "not the netdev's speed after port start", p)
    expect(events(p) == 0, f"{events(p)} link state change events for a stop and a start", p)
    quit_testpmd(p)


def test_removal_is_a_link_change():
    """A VF removal takes the link down (one event), its return brings it up (one more), while the
    driver recovers the port by itself."""
    p = interactive("link-removal")
    emu_ctl(p, "remove", "0")
    p.wait_for(LSC, timeout=EVENT_TIMEOUT)
    expect(port_info(p, "Link status") == "down", "link not down while the VF is removed", p)
    emu_ctl(p, "add", "0")
    p.wait_for(LSC, timeout=EVENT_TIMEOUT, start=p.last_index + 1)
    expect(port_info(p, "Link status") == "up", "link not up once the VF is back", p)
    expect(events(p) == 2, f"{events(p)} link state change events for one removal", p)
    quit_testpmd(p)


def test_mac_lookup_never_takes_the_synthetic_twin():
    """Beside the VF's netdev (renamed, as udev names it on Azure) hv_netvsc's synthetic interface
    has the same MAC: `mac=` finds the VF's netdev, never the synthetic one, and the link is read
    from it."""
    mac = emu_mac(0)
    p = interactive("link-twin", ["--ifname", "enP30832s1", "--netvsc", "eth0"],
                    eal_extra=["-a", f"{EMU_BDF},mac={mac}", "--log-level=pmd.net.mana.init:info"])
    root = Path(child_environ(p, "SYSFS_PCI_DEVICES")).parents[2]
    twin = root / "class/net/eth0/address"
    expect(twin.read_text().strip().lower() == mac,
           f"the emulator shows no synthetic twin with MAC {mac} at {twin}", p)
    probed = [line for line in p.lines if f"{EMU_BDF}: port 0," in line]
    expect(len(probed) == 1 and "(enP30832s1)" in probed[0],
           f"the probe took another interface than the VF's netdev: {probed}", p)
    emu_ctl(p, "link", "0", "down")
    p.wait_for(LSC, timeout=EVENT_TIMEOUT)
    expect(port_info(p, "Link status") == "down", "link not down after the link event", p)
    quit_testpmd(p)


def test_a_renamed_netdev_is_followed():
    """The kernel renames the port's netdev while the port runs (`mana-emu ctl rename`): the
    driver says so once and reads the link from the new name (a link event still reaches
    testpmd). Renamed again while the VF is removed: the port comes back on it (found by MAC
    under the returning function, as Azure's udev names a returning VF)."""
    p = interactive("link-rename", ["--ifname", "eth1"],
                    eal_extra=["-a", EMU_BDF, "--log-level=pmd.net.mana.driver:info"])
    expect(emu_ctl(p, "rename", "0", "0", "enP30832s1") == "ok renamed enP30832s1", "rename", p)
    emu_ctl(p, "link", "0", "down")
    p.wait_for(LSC, timeout=EVENT_TIMEOUT)
    expect(port_info(p, "Link status") == "down", "link not down after a rename", p)
    said = [line for line in p.lines if "its netdev eth1 is now called enP30832s1" in line]
    expect(len(said) == 1, f"the driver's note on the rename: {said}", p)
    # Each change waits for its event: testpmd prints events between a command and its answer.
    emu_ctl(p, "link", "0", "up")
    p.wait_for(LSC, timeout=EVENT_TIMEOUT, start=p.last_index + 1)
    emu_ctl(p, "remove", "0")
    p.wait_for(LSC, timeout=EVENT_TIMEOUT, start=p.last_index + 1)
    expect(emu_ctl(p, "rename", "0", "0", "enP2s2") == "ok renamed enP2s2", "rename removed", p)
    emu_ctl(p, "add", "0")
    p.wait_for(r"port 0 \(enP2s2\): the VF is back on RDMA device", timeout=EVENT_TIMEOUT)
    p.wait_for(LSC, timeout=EVENT_TIMEOUT, start=p.last_index + 1)
    expect(port_info(p, "Link status") == "up", "link not up on the renamed netdev", p)
    expect(events(p) == 4, f"{events(p)} link state change events for 2 changes and a removal", p)
    quit_testpmd(p)


if __name__ == "__main__":
    harness.main([test_speed_is_what_the_netdev_reports, test_a_kernel_before_6_19_keeps_the_link_up,
                  test_link_events_reach_testpmd,
                  test_without_lsc_interrupt_the_status_still_follows,
                  test_a_stopped_port_has_its_link_down, test_removal_is_a_link_change,
                  test_mac_lookup_never_takes_the_synthetic_twin,
                  test_a_renamed_netdev_is_followed])
