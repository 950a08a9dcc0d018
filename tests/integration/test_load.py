#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The built PMD as Debian's DPDK 22.11 sees it: dpdk-pmdinfo.py reads its info, dpdk-testpmd loads
it with -d, and the PCI bus hands it MANA devices with their devargs (in both the -a form and Azure's
--vdev form)."""

import json
import subprocess

import harness
from harness import Program, eal_args, expect, fake_pci_tree

# Hugepages its DPDK processes take together at their peak (hugepages.py): testpmd with a null vdev and --total-num-mbufs, measured 8 and 20 MB.
HUGEPAGES_MB = 64


def test_pmdinfo_reports_driver():
    out = subprocess.run(["dpdk-pmdinfo.py", str(harness.PMD)], capture_output=True, text=True,
                         check=False)
    expect(out.returncode == 0, f"dpdk-pmdinfo.py failed: {out.stderr}")
    drivers = json.loads(out.stdout)
    mana = [d for d in drivers if d.get("name") == "net_mana"]
    expect(len(mana) == 1, f"net_mana not reported: {out.stdout}")
    info = mana[0]
    params = "mac=<mac_addr> recovery_timeout=<seconds> tx_stall_timeout=<seconds>"
    expect(info.get("params") == params, f"params: {info}")
    expect(info.get("kmod") == "* ib_uverbs & mana_ib", f"kmod: {info}")
    ids = {(p.get("vendor"), p.get("device")) for p in info.get("pci_ids", [])}
    expect(("1414", "00ba") in ids and ("1414", "00b9") in ids, f"pci ids: {info}")


def test_testpmd_loads_the_pmd():
    p = Program(["dpdk-testpmd", *eal_args("mana-load", ["--no-pci", "--vdev", "net_null0",
                                                          "--log-level", "lib.eal:debug"]),
                 "--", "--stats-period", "1", "--total-num-mbufs", "2048"])
    p.wait_for(r"open shared lib .*librte_net_mana\.so")
    p.wait_for(r"Port statistics")
    rc = p.stop()
    expect(rc == 0, f"testpmd exited {rc}", p)
    expect("Bye..." in p.output(), "testpmd did not finish cleanly", p)
    errors = [line for line in p.lines if "EAL: Error" in line or "net_mana" in line and "rror" in line]
    expect(not errors, f"errors while loading the PMD: {errors}", p)


def probe_with(devargs_option, prefix):
    tree = fake_pci_tree()
    # The PCI bus logs "Probe PCI driver" at INFO in DPDK 22.11, at DEBUG since 24.11.
    eal = eal_args(prefix, [*devargs_option, "--log-level", "bus.pci:debug"])
    p = Program(["dpdk-testpmd", *eal, "--", "--stats-period", "1",
                 "--total-num-mbufs", "2048"],
                env={"SYSFS_PCI_DEVICES": str(tree / "devices")})
    return p


def test_pci_probe_reaches_net_mana_with_devargs():
    bad = "zz:0d:3a:76:3b:d0"
    p = probe_with(["-a", f"7870:00:00.0,mac={bad}"], "mana-probe-a")
    p.wait_for(r"Probe PCI driver: net_mana \(1414:00ba\) device: 7870:00:00\.0")
    p.wait_for(rf"7870:00:00\.0: malformed MAC '{bad}'")
    rc = p.stop()
    expect(rc == 0, f"testpmd exited {rc}", p)


def test_azure_vdev_form_is_a_pci_devargs():
    macs = ",".join(f"mac=00:0d:3a:00:00:{i:02x}" for i in range(9))
    p = probe_with([f"--vdev=7870:00:00.0,{macs}"], "mana-probe-vdev")
    p.wait_for(r"Probe PCI driver: net_mana \(1414:00ba\) device: 7870:00:00\.0")
    p.wait_for(r"7870:00:00\.0: more than 8 mac= devargs")
    rc = p.stop()
    expect(rc == 0, f"testpmd exited {rc}", p)


if __name__ == "__main__":
    harness.main([test_pmdinfo_reports_driver, test_testpmd_loads_the_pmd,
                  test_pci_probe_reaches_net_mana_with_devargs, test_azure_vdev_form_is_a_pci_devargs])
