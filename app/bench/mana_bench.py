#!/usr/bin/env python3
"""Packet-rate benchmark of a MANA PMD on the emulator (design §6).

For each frame size: Debian's dpdk-testpmd does io forwarding between the two ports of an emulated
VF joined by a `pair` wire (emulator in poll mode, one queue per port), with --record-core-cycles;
frames are injected with `start tx_first N`. Mpps is the forwarding core's RX rate over the
measurement window; cycles/packet is testpmd's own figure. The net_null floor (the same testpmd
loop on two null ports) is measured in the same run. Any MANA PMD can be measured: --pmd PATH.

  mana_bench.py [--pmd PATH] [--sizes 64,512,1518] [--seconds 10] [--markdown FILE]
"""

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TOP / "tests" / "integration"))
import harness  # noqa: E402
from harness import EMU_BDF, Program  # noqa: E402


def measure(argv, seconds, in_flight_bursts):
    """Runs interactive testpmd (argv), forwards for `seconds`, returns (Mpps, cycles/packet)."""
    p = Program(argv, stdin=subprocess.PIPE)
    p.wait_for(r"testpmd> |Press enter|Checking link statuses|Done", timeout=60)
    p.send("set record-core-cycles on")
    p.send(f"start tx_first {in_flight_bursts}")
    p.wait_for(r"io packet forwarding")
    # Warm up, then take two counter samples `seconds` apart.
    first = sample(p)
    t0 = time.monotonic()
    time.sleep(seconds)  # the measurement window itself, not a synchronisation
    second = sample(p)
    elapsed = time.monotonic() - t0
    mark = len(p.lines)
    p.send("stop")
    p.wait_for(r"^Done\.", start=mark)
    p.send("quit")
    p.finish()
    cycles = re.search(r"CPU cycles/packet=([\d.]+)", "\n".join(p.lines[mark:]))
    mpps = (second - first) / elapsed / 1e6
    return mpps, float(cycles.group(1)) if cycles else float("nan")


def sample(p):
    """Total RX packets over all ports."""
    return sum(s.get("RX-packets", 0) for s in harness.show_port_stats(p).values())


def testpmd(prefix, eal, size, desc):
    # `size` is the frame size on the wire, with its 4-byte FCS (RFC 2544 sizes); testpmd's
    # --txpkts is the frame without FCS.
    return ["dpdk-testpmd", "-l", "0-1", "--file-prefix", prefix, "--huge-unlink", "-m", "512",
            *eal, "--", "-i", "--forward-mode=io", f"--txpkts={size - 4}", f"--rxd={desc}",
            f"--txd={desc}", "--nb-cores=1",
            # The vPort takes only its own MAC and broadcast: io forwarding of broadcast frames.
            "--eth-peer=0,ff:ff:ff:ff:ff:ff", "--eth-peer=1,ff:ff:ff:ff:ff:ff"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pmd", default=str(harness.PMD), help="the MANA PMD to measure")
    ap.add_argument("--sizes", default="64,512,1518")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--markdown", help="write the results table to this file")
    args = ap.parse_args()
    pmd = harness._loadable(Path(args.pmd).resolve())
    desc, bursts = 1024, 16
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        null = measure(testpmd("bench-null", ["--no-pci", "--vdev", "net_null0", "--vdev", "net_null1"],
                               size, desc), args.seconds, bursts)
        # testpmd forwards on lcore 1; the emulator's device thread gets CPU 0 (testpmd's main lcore,
        # idle at its prompt), so the two busy loops never share a core. 1024 descriptors: a 2025
        # kernel with rdma-core >= 49 (libmana-max-wr=0).
        mana = measure([str(harness.MANA_EMU), "run", "--ports", "2", "--wire", "pair", "--doorbell",
                        "poll", "--limits", "2025", "--hw", "libmana-max-wr=0", "--device-cpu", "0",
                        "--",
                        *testpmd("bench-mana", ["-d", str(pmd), "-a", EMU_BDF], size, desc)],
                       args.seconds, bursts)
        rows.append((size, mana, null))
        print(f"{size:5d} B: net_mana {mana[0]:7.2f} Mpps {mana[1]:8.1f} cycles/pkt | "
              f"net_null floor {null[0]:7.2f} Mpps {null[1]:8.1f} cycles/pkt", flush=True)
    if args.markdown:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
        lines = [f"Measured {time.strftime('%Y-%m-%d')} on {cpu}, {os.cpu_count()} cores; PMD `{args.pmd}`;",
                 f"{args.seconds:g} s per point; `scripts/bench.sh` (app/bench/mana_bench.py).", "",
                 "| frame (with FCS) | net_mana Mpps | net_mana cycles/packet | net_null Mpps | net_null cycles/packet |",
                 "|---|---|---|---|---|"]
        for size, mana, null in rows:
            lines.append(f"| {size} B | {mana[0]:.2f} | {mana[1]:.1f} | {null[0]:.2f} | {null[1]:.1f} |")
        Path(args.markdown).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
