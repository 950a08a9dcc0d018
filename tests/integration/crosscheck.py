# SPDX-License-Identifier: BSD-3-Clause
"""The integration tests of one file run for another driver or emulator profile than the file's
own run: test_system_net_mana.py runs tests of test_forwarding.py, test_tap.py and
test_multiprocess.py against the installed DPDK's net_mana under each profile. A test runs in its
own python3 process of its file (MANA_TESTS names it), so that no test file imports another: the
driver under test is this process's (MANA_PMD), the profile and its overrides go in
MANA_EMU_PROFILE and MANA_EMU_PROFILE_OVERRIDES (harness.py), and the test passes, skips or fails
here as it did there, its output shown indented."""

import os
import re
import sys
from pathlib import Path

import harness

HERE = Path(__file__).resolve().parent
# The longest any one of the reused tests may take (each of its own waits is bounded and shorter);
# scaled by TIME_SCALE as every bounded wait of the harness.
TEST_TIMEOUT = 600.0


def test_names(file):
    """The test functions `file` defines (def test_...), to check a name before a run."""
    return re.findall(r"^def (test_\w+)\(", (HERE / file).read_text(), re.M)


def in_own_process(file, name, profile="", overrides=()):
    """A test function for harness.run_main that runs test `name` of test file `file` under the
    emulator profile `profile` (mana-emu's defaults when empty) with the options `overrides` after
    it."""
    if name not in test_names(file):
        raise harness.Failure(f"{file} has no test {name}")

    def run():
        env = {"MANA_TESTS": name, "MANA_EMU_PROFILE": profile,
               "MANA_EMU_PROFILE_OVERRIDES": " ".join(overrides)}
        p = harness.Program([sys.executable, "-u", HERE / file], env=env)
        status = p.finish(timeout=TEST_TIMEOUT)
        print("\n".join("  | " + line for line in p.lines), flush=True)
        skipped = [line for line in p.lines if line.startswith(f"SKIP {name}: ")]
        if skipped and status in (77, 1 if os.environ.get("CI") == "true" else 77):
            raise harness.Skip(skipped[0].split(": ", 1)[1])
        passed = any(line.startswith(f"PASS {name} ") for line in p.lines)
        if status != 0 or not passed:
            failed = ([line for line in p.lines if line.startswith("FAILED")] or
                      [line for line in p.lines if line.startswith("FAIL ")])
            raise harness.Failure(f"{file} {name} exited {status}: " +
                                  ("\n".join(failed) or "no PASS line"))
    return run
