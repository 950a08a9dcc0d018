#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpdk-devbind.py of the DTS SUT (scripts/test-dts.sh), run under `mana-emu run` with the VFs.

DTS copies DPDK's usertools/dpdk-devbind.py to the SUT, binds ports with it and checks the
driver of each port in its `--status` (smoke_tests' device_bound_to_driver). The emulated VFs
exist only in the sysfs tree of a `mana-emu run` (its SYSFS_PCI_DEVICES), which DPDK's script,
listing devices with lspci, does not see. This one prints that tree's devices in the same form
(`<pci> '<device>' if=<netdev> drv=<driver> unused=`); binding is never needed (a MANA VF runs
DPDK on its kernel driver, as DTS's configuration says: os_driver_for_dpdk = os_driver = mana),
so -b and -u only say why they are refused.
"""
import os
import sys
from pathlib import Path


def status():
    root = Path(os.environ["SYSFS_PCI_DEVICES"])
    print("\nNetwork devices using kernel driver\n===================================")
    for dev in sorted(root.iterdir()):
        device = (dev / "device").read_text().strip()[2:]
        driver = os.path.basename(os.readlink(dev / "driver")) if (dev / "driver").exists() else ""
        netdevs = ",".join(sorted(p.name for p in (dev / "net").iterdir())) if (dev / "net").is_dir() else ""
        print(f"{dev.name} 'Device {device}' if={netdevs} drv={driver} unused=")
    return 0


def main(argv):
    if "--status" in argv or "-s" in argv:
        return status()
    print("dpdk-devbind.py (DTS stand-in): the emulated MANA VFs keep their kernel driver (mana); "
          f"refused: {' '.join(argv[1:])}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
