#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""DTS's results (results.json) as a table of suites and cases, checked against the deviations the
documentation allows (scripts/test-dts.sh).

  report.py RESULTS_JSON DOC_MD [--no-fail]

A case that FAILs, ERRORs or is BLOCKed fails the run unless DOC_MD lists it in its "DTS deviations" section as
a table row `| suite | case, case | ...` (a hardware limit, with its source in doc/hardware.md);
`*` as the case allows every case of the suite. A listed case that passes is reported as such, so the list
shrinks when the driver or DTS changes. --no-fail: report only (another driver, for comparison).
"""
import json
import re
import sys
from pathlib import Path

# BLOCK: DTS skipped the suite after a failed blocking one, so its cases say nothing.
BAD = {"FAIL", "ERROR", "BLOCK"}


def allowed(doc):
    text = Path(doc).read_text()
    m = re.search(r"^#+ DTS deviations\n(.*?)(?=^#+ |\Z)", text, re.S | re.M)
    if not m:
        return set()
    rows = set()
    for line in m.group(1).splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and line.startswith("|") and not set(cells[0]) <= set("-: ") \
                and cells[0] != "suite":
            for case in cells[1].split(","):
                rows.add((cells[0], case.strip().strip("`")))
    return rows


def cases(results):
    for suite, node in results.get("test_suites", {}).items():
        suite_result = node.get("result")
        setup = node.get("setup", {})
        for name, case in node.items():
            if name in ("setup", "teardown", "result", "reason") or not isinstance(case, dict):
                continue
            result = case.get("result") or case.get("setup", {}).get("result") or suite_result
            reason = case.get("reason") or case.get("setup", {}).get("reason") \
                or setup.get("reason") or node.get("reason") or ""
            yield suite, name, result, reason
        if not any(isinstance(v, dict) and k not in ("setup", "teardown") for k, v in node.items()):
            yield suite, "(suite)", suite_result or setup.get("result"), \
                setup.get("reason") or node.get("reason") or ""


def main(argv):
    results = json.loads(Path(argv[1]).read_text())
    allow = allowed(argv[2])
    report_only = "--no-fail" in argv
    bad = []
    print(f"{'suite':<32} {'case':<44} result")
    for suite, name, result, reason in cases(results):
        listed = (suite, name) in allow or (suite, "*") in allow
        note = ""
        if result in BAD:
            if listed:
                note = "  (listed deviation)"
            else:
                bad.append((suite, name))
        elif listed and result == "PASS":
            note = "  (listed deviation, passes now)"
        line = f"{suite:<32} {name:<44} {result}{note}"
        if reason and result != "PASS":
            line += f"\n{'':<34}{reason.splitlines()[0][:160]}"
        print(line)
    s = results.get("summary", {})
    print("summary: " + ", ".join(f"{k} {v}" for k, v in s.items()))
    for err in results.get("execution_errors", []):
        print(f"execution error: {err}")
        bad.append(("(run)", err))
    if bad and not report_only:
        print(f"test-dts: {len(bad)} failed or errored case(s) not listed under 'DTS deviations': "
              + ", ".join(f"{s}/{c}" for s, c in bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
