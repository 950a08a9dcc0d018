#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prints the ninja targets the tests of one meson suite need (their programs and what they depend
on), so that a build made only to run that suite (scripts/test.sh's TSan stage) compiles no more.
  scripts/suite-targets.py BUILD_DIR SUITE"""
import json
import os
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, suite = os.path.abspath(sys.argv[1]), sys.argv[2]

    def introspect(what):
        return json.loads(subprocess.check_output(["meson", "introspect", build, what]))

    targets = {t["id"]: t for t in introspect("--targets")}
    wanted = set()
    for test in introspect("--tests"):
        if not any(s.split(":")[-1] == suite for s in test["suite"]):
            continue
        for dep in test.get("depends", []):
            wanted.update(os.path.relpath(f, build) for f in targets[dep]["filename"])
    if not wanted:
        sys.exit(f"suite-targets: no test of suite {suite!r} in {build}")
    print("\n".join(sorted(wanted)))


if __name__ == "__main__":
    main()
