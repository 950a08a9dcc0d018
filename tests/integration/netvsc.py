# SPDX-License-Identifier: BSD-3-Clause
"""testpmd over DPDK's net_netvsc on the emulated synthetic NIC (`mana-emu run --uio-netvsc 0`)
with our net_mana as its VF (doc/guide.md "Under DPDK's netvsc PMD"): the launch, what netvsc logs
at a VF hot-add, its port's statistics, and whether this DPDK's testpmd forwards over it."""

import functools
import subprocess

import harness
from emulator import netvsc_counters
from harness import Program, emu_run
from testpmd_cli import command, parse_forward_stats, show_port_stats

NETVSC_PORT = 1  # the VF (PCI bus, probed first) is port 0, owned by net_netvsc, the netvsc port 1
# net_netvsc's line when its hot-add finds our VF again; DPDK 24.11 prefixes its log type
# (RTE_LOG_LINE_PREFIX), which LISA's regex includes.
HOTPLUG_LINE = ((r"HN_DRIVER: " if harness.DPDK_VERSION >= (24, 11) else r"") +
                r"netvsc_hotplug_retry\(\): Found matching MAC address, adding device ")
FORWARDS = harness.DPDK_VERSION >= (23, 11)
WHY_NOT = (f"DPDK {harness.DPDK_VERSION[0]}.{harness.DPDK_VERSION[1]}'s testpmd forwards nothing "
           "over a netvsc port (net_netvsc before 23.11 never marks its queues started): run with "
           "DPDK 24.11's (scripts/test-dpdk.sh 24.11 integration-netvsc-testpmd)")


def needs_forwarding_testpmd(test):
    """`test`, skipped with WHY_NOT on a DPDK whose testpmd forwards nothing over a netvsc port."""
    @functools.wraps(test)
    def run():
        if not FORWARDS:
            raise harness.Skip(WHY_NOT)
        test()
    return run


def netvsc_testpmd(nic, wire, prefix, args, emu_opts=(), pool=("--total-num-mbufs=8192",),
                   devargs=""):
    """Interactive testpmd on the netvsc port of `nic` (LISA's EAL line but for this machine's two
    cores, -m and --file-prefix for two processes, -d for the driver built here; `devargs` after
    the MAC), ready once the host has the data path on our VF."""
    eal = ["-l", "0-1", "--vdev", f"{nic['pci']},mac={nic['mac']}{devargs}", "--log-level",
           "netvsc,debug",
           "--file-prefix", prefix, "-m", "256", "--huge-unlink", *harness.pmd_args()]
    p = Program([*emu_run(["--vf", nic["pci"], "--mac", nic["mac"], "--ip", nic["ip"],
                           "--wire", wire, "--uio-netvsc", "0", *emu_opts]),
                 "--", "dpdk-testpmd", *eal, "--", "-i", "--nb-cores=1", "--txd=256", "--rxd=256",
                 *pool, *args], stdin=subprocess.PIPE)
    p.wait_for(r"hn_vf_attach\(\): found matching VF port 0", timeout=60)
    p.wait_for(rf"Port {NETVSC_PORT}: {nic['mac'].upper()}", timeout=60)
    harness.repeat_until(lambda: netvsc_counters(p), lambda c: c["data_path_vf"] == 1,
                         "the data path on the VF", timeout=30)
    return p


def stop_forwarding(p):
    """`stop`: testpmd's forward statistics of the netvsc port."""
    answer = command(p, "stop", r"^Done\.")
    return parse_forward_stats("\n".join(answer))[NETVSC_PORT]


def netvsc_xstats(p):
    """`show port xstats` of the netvsc port (more names than telemetry's reply holds): the lines
    up to the `show port stats` typed after it; and that port's stats."""
    mark = len(p.lines)
    p.send(f"show port xstats {NETVSC_PORT}")
    stats = show_port_stats(p, NETVSC_PORT)[NETVSC_PORT]
    pairs = (line.rsplit(":", 1) for line in p.lines[mark:p.last_index] if ":" in line)
    return {k.strip(): int(v) for k, v in pairs if v.strip().isdigit()}, stats
