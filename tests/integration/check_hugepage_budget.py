#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every integration test file declares what its DPDK processes take together at their peak
(HUGEPAGES_MB, tests/integration/hugepages.py), and each declaration fits in what
scripts/hugepages.sh reserves: meson runs the integration tests one at a time, so the largest
declaration is the suite's need."""

import re
import sys
from pathlib import Path

import hugepages

HERE = Path(__file__).resolve().parent


def main():
    problems = []
    declared = {}
    for path in sorted(HERE.glob("test_*.py")):
        found = re.findall(r"^HUGEPAGES_MB = (\d+)\s*(?:#.*)?$", path.read_text(), re.M)
        if len(found) != 1:
            problems.append(f"{path.name}: {len(found)} HUGEPAGES_MB declarations, expected one")
            continue
        declared[path.name] = int(found[0])
        if declared[path.name] > hugepages.RESERVED_MB:
            problems.append(f"{path.name}: HUGEPAGES_MB = {found[0]} is over the {hugepages.RESERVED_MB} MB "
                            "scripts/hugepages.sh reserves")
    for name, mb in sorted(declared.items(), key=lambda item: -item[1]):
        print(f"{mb:5d} MB  {name}")
    for line in problems:
        print(f"FAILED: {line}")
    print(f"{len(declared) - len(problems)} passed, {len(problems)} failed")
    return 1 if problems or not declared else 0


if __name__ == "__main__":
    sys.exit(main())
