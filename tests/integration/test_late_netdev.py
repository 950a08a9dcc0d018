#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A VF whose netdev comes late after a hot add, under the kernel's name first (doc/hardware.md
§9.25): `--hw netdev-delay-ms` and `netdev-rename-ms` bring the PCI function back alone, then its
netdev as eth<k>, renamed by "udev", then its RDMA device. A probe while the function has no netdev
fails at once with one line naming what it lacks (not the "load the modules" line); once the netdev
has its name the probe takes the port by `mac=` from the VF's netdev, never from the synthetic
interface that shares its MAC. Also what a netdev that is down gives (sysfs EINVAL, doc/hardware.md
§9.24) as a preloaded program reads it."""

import subprocess
import time
from pathlib import Path

import harness
from harness import EMU_BDF, child_environ, emu_ctl, emu_mac, expect, testpmd_on_emu
from testpmd_cli import command

# One testpmd at a time with its default mbuf pool, as test_link.py.
HUGEPAGES_MB = 512

DELAY_MS = 5000
RENAME_MS = 2000
NO_NETDEV = r"the PCI function has no netdev yet"
LSC = r"^Port 0: link state change event"


def attach(p, devargs):
    """`port attach` and the line that ends it: testpmd's success or failure line."""
    mark = len(p.lines)
    p.send(f"port attach {devargs}")
    p.wait_for(r"Port \d+ is attached|Failed to attach port|Invalid port", start=mark, timeout=60)
    return mark


def test_probe_before_the_netdev_then_after_its_rename():
    """Removed, then added with the netdev 5 s late and under eth1 for 2 s (eth0 is the synthetic
    interface's): `port attach` before the netdev fails with the driver's line; the run folder
    shows the netdev as eth1, then as enP30832s1 with the RDMA device; `port attach` then probes the
    port on enP30832s1 by mac=."""
    mac = emu_mac(0)
    devargs = f"{EMU_BDF},mac={mac},recovery_timeout=0"
    p = testpmd_on_emu(["--ports", "1", "--ifname", "enP30832s1", "--netvsc", "eth0",
                        "--hw", f"netdev-delay-ms={DELAY_MS}", "--hw", f"netdev-rename-ms={RENAME_MS}"],
                       "late-netdev", ["-i"],
                       eal_extra=["-a", devargs, "--log-level=pmd.net.mana.init:info"],
                       interactive=True, lcores="2@0,3@1")
    p.wait_for(rf"Port 0: {mac.upper()}")
    root = Path(child_environ(p, "SYSFS_PCI_DEVICES")).parents[2]
    function = root / "bus/pci/devices" / EMU_BDF
    mark = len(p.lines)
    expect(emu_ctl(p, "remove", "0") == "ok VF 0 removed", "remove refused", p)
    p.wait_for(r"Port 0 is closed", start=mark, timeout=30)
    reply = emu_ctl(p, "add", "0")
    expect(reply == f"ok VF 0 added, its netdevs in {DELAY_MS} ms", f"add: {reply!r}", p)
    expect(function.is_dir() and not (function / "net").exists(),
           "the function came back with its netdev", p)
    mark = attach(p, devargs)
    expect(any("Failed to attach port" in line for line in p.lines[mark:]),
           "the probe before the netdev did not fail", p)
    said = [line for line in p.lines[mark:] if NO_NETDEV in line]
    expect(len(said) == 1, f"the driver's line on the missing netdev: {said}", p)
    expect(not any("no MANA Ethernet RDMA device" in line for line in p.lines[mark:]),
           "the probe blamed the kernel modules", p)
    # The kernel's name first: eth0 is taken by the synthetic interface.
    harness.repeat_until(lambda: (time.sleep(0.02), (function / "net").exists())[1], bool,
                         "the netdev to appear", timeout=DELAY_MS / 1000 + 30)
    names = sorted(e.name for e in (function / "net").iterdir())
    expect(names in (["eth1"], ["enP30832s1"]), f"the netdev's first names: {names}", p)
    expect(names == ["eth1"] or (root / "class/infiniband/mana_0").exists(),
           "the RDMA device came before the rename", p)
    harness.repeat_until(lambda: (time.sleep(0.05), (root / "class/infiniband/mana_0").exists())[1],
                         bool, "the RDMA device", timeout=RENAME_MS / 1000 + 30)
    expect(sorted(e.name for e in (function / "net").iterdir()) == ["enP30832s1"],
           "the netdev not renamed when the RDMA device came", p)
    expect(not (root / "class/net/eth1").exists(), "the kernel name outlived the rename", p)
    mark = attach(p, devargs)
    probed = [line for line in p.lines[mark:] if f"{EMU_BDF}: port" in line]
    expect(len(probed) == 1 and "(enP30832s1)" in probed[0],
           f"the probe after the rename took another interface: {probed}", p)
    p.send("port start all")
    p.wait_for(rf"Port \d+: {mac.upper()}", start=mark)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_the_driver_recovers_over_a_late_netdev():
    """The driver's own recovery (recovery_timeout 30 s) keeps the port over the removal and brings
    it back once the late, renamed netdev and its RDMA device are there; the link reads up on the
    netdev's final name."""
    p = testpmd_on_emu(["--ports", "1", "--ifname", "enP30832s1",
                        "--hw", "netdev-delay-ms=1000", "--hw", "netdev-rename-ms=1000"],
                       "late-netdev-recovery", ["-i"],
                       eal_extra=["-a", EMU_BDF, "--log-level=pmd.net.mana.driver:info"],
                       interactive=True, lcores="2@0,3@1")
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    mark = len(p.lines)
    emu_ctl(p, "remove", "0")
    p.wait_for(LSC, start=mark, timeout=30)  # the link goes down with the VF
    mark = p.last_index + 1
    emu_ctl(p, "add", "0")
    p.wait_for(r"port 0 \((eth\d+|enP30832s1)\): the VF is back on RDMA device", start=mark,
               timeout=60)
    p.wait_for(LSC, start=mark, timeout=30)  # and up again with it
    lines = command(p, "show port info 0", r"^Link status:")
    expect(lines[-1].split(":", 1)[1].strip() == "up", "the link not up after the recovery", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_a_down_netdev_answers_einval():
    """The kernel answers `speed` and `carrier` of a netdev that is not running with EINVAL
    (net-sysfs.c); a program under the emulator reads them so, and reads them once the netdev is
    up (--netdev-up)."""
    read = ["sh", "-c", 'cat "$SYSFS_PCI_DEVICES/7870:00:00.0/net/eth1/speed" '
            '"$SYSFS_PCI_DEVICES/7870:00:00.0/net/eth1/carrier" 2>&1; true']
    down = subprocess.run([*harness.emu_run(["--ports", "1"]), "--", *read],
                          capture_output=True, text=True, timeout=60)
    expect(down.stdout.count("Invalid argument") == 2, f"down: {down.stdout}{down.stderr}")
    up = subprocess.run([*harness.emu_run(["--ports", "1", "--netdev-up", "0"]), "--", *read],
                        capture_output=True, text=True, timeout=60)
    expect(up.stdout.split() == ["25000", "1"], f"up: {up.stdout}{up.stderr}")


if __name__ == "__main__":
    harness.main([test_probe_before_the_netdev_then_after_its_rename,
                  test_the_driver_recovers_over_a_late_netdev, test_a_down_netdev_answers_einval])
