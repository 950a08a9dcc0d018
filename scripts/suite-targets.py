#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prints the ninja targets the tests of some meson suites need (their programs and what they depend
on), so that a build made only to run those suites (scripts/test.sh's main build and TSan stage,
scripts/test-dpdk.sh --ci) compiles no more.
  scripts/suite-targets.py BUILD_DIR SUITE [SUITE...]"""
import json
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, suites = os.path.abspath(sys.argv[1]), set(sys.argv[2:])

    def introspect(what):
        return json.loads(subprocess.check_output(["meson", "introspect", build, what]))

    targets = {t["id"]: t for t in introspect("--targets")}
    wanted = set()
    for test in introspect("--tests"):
        if not any(s.split(":")[-1] in suites for s in test["suite"]):
            continue
        for dep in test.get("depends", []):
            wanted.update(os.path.relpath(f, build) for f in targets[dep]["filename"])
    if not wanted:
        sys.exit(f"suite-targets: no test of suites {sorted(suites)} in {build}")
    print("\n".join(sorted(wanted)))


if __name__ == "__main__":
    main()
