# SPDX-License-Identifier: BSD-3-Clause
"""The hugepage budget of the integration tests.

scripts/hugepages.sh reserves RESERVED_MB of 2 MiB hugepages for the whole suite. meson runs the
integration tests one at a time (is_parallel: false; the unit tests use --no-huge), so each test
file may use the whole reservation, and declares what its DPDK processes take together at their
peak as `HUGEPAGES_MB` (test_hugepage_budget.py checks that every file declares a figure within
the reservation). Before the first test the harness waits, bounded, for that much to be free and
otherwise fails with one line naming who holds the pages; during the run it samples the pages in
use and reports the peak, which must stay within the declaration under CI=true."""

import os
import re
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
PAGE_MB = 2
_NR = Path("/sys/kernel/mm/hugepages/hugepages-2048kB")


def reserved_by_setup_mb():
    """What scripts/hugepages.sh reserves when called without an argument (as setup.sh does)."""
    text = (TOP / "scripts/hugepages.sh").read_text()
    m = re.search(r"^need=\$\{1:-(\d+)\}", text, re.M)
    if not m:
        raise RuntimeError("scripts/hugepages.sh has no `need=${1:-N}` default")
    return int(m.group(1)) * PAGE_MB


RESERVED_MB = reserved_by_setup_mb()


def _pages(name):
    return int((_NR / name).read_text())


def total_mb():
    return _pages("nr_hugepages") * PAGE_MB


def free_mb():
    return _pages("free_hugepages") * PAGE_MB


def holders():
    """'pid name (N MB)' of every process that has hugetlb memory mapped (DPDK's rtemap files,
    unlinked or not, and hugetlb memfds): the Shared/Private_Hugetlb lines of its smaps."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            kb = sum(int(line.split()[1]) for line in (proc / "smaps").read_text().splitlines()
                     if line.startswith(("Shared_Hugetlb:", "Private_Hugetlb:")))
            if kb:
                found.append(f"{proc.name} {(proc / 'comm').read_text().strip()} ({kb // 1024} MB)")
        except (OSError, ValueError, IndexError):
            continue
    return found


def require(need_mb, timeout=20.0):
    """Waits until `need_mb` is free (processes of the previous test may still be exiting); one
    line that says what is missing and who holds the pages when it never is. None when it is."""
    deadline = time.monotonic() + timeout
    while free_mb() < need_mb:
        if time.monotonic() > deadline:
            held = ", ".join(holders()) or "no process (pages of a crashed program's files in /dev/hugepages?)"
            return (f"hugepages: this test needs {need_mb} MB of 2 MiB hugepages, {free_mb()} MB of "
                    f"{total_mb()} MB are free after {timeout:.0f} s; held by: {held}; the suite "
                    f"reserves {RESERVED_MB} MB with scripts/hugepages.sh")
        time.sleep(0.1)
    return None


class PeakSampler:
    """Samples the hugepages in use every 50 ms in a thread; `peak_mb` is the most seen, above what
    was in use when it started."""

    def __init__(self):
        self._base = total_mb() - free_mb()
        self.peak_mb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.05):
            self.peak_mb = max(self.peak_mb, total_mb() - free_mb() - self._base)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak_mb


def check_peak(peak_mb, declared_mb):
    """A line for the output, and whether the peak broke the declaration (a failure under CI=true,
    where nothing else on the machine uses hugepages)."""
    over = peak_mb > declared_mb
    line = f"hugepages: peak {peak_mb} MB in use, {declared_mb} MB declared (HUGEPAGES_MB)"
    if over:
        line += " -- over the declaration: raise HUGEPAGES_MB (within the reservation) or use less"
    return line, over and os.environ.get("CI") == "true"
