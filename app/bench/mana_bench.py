#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Packet-rate benchmark of a MANA PMD on the emulator (doc/performance.md).

For each frame size: Debian's dpdk-testpmd does mac forwarding (every frame leaves with the sending
port's own source MAC, as Azure's anti-spoofing requires) between the two ports of an emulated
VF joined by a `pair` wire (emulator in poll mode, one queue per port), with --record-core-cycles;
frames are injected with `start tx_first N`. Mpps is the forwarding core's RX rate over the
measurement window; cycles/packet is testpmd's own figure. The net_null floor (the same testpmd
loop on two null ports) and DPDK's own net_mana (the plugin scripts/build-upstream-mana.sh builds
from the installed DPDK's source, loaded with -d as ours) are measured in the same run, on the same
emulator command line. Any MANA PMD can be measured: --pmd PATH; --upstream PATH|none.

  mana_bench.py [--pmd PATH] [--upstream PATH|none] [--sizes 64,512,1518] [--seconds 10]
                [--markdown FILE]
"""

import argparse
import json
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
import testpmd_cli  # noqa: E402
from harness import EMU_BDF, Program  # noqa: E402


def device_tx_wqes(p):
    """TX WQEs the emulator under `p` has consumed (all SQs of VF 0)."""
    reply = harness.emu_ctl(p, "counters", "0")
    return sum(sq["wqes"] for sq in json.loads(reply.split(" ", 1)[1])["sqs"])


def measure(argv, seconds, in_flight_bursts, on_emulator=False):
    """Runs interactive testpmd (argv), forwards for `seconds`, returns (Mpps, cycles/packet), or
    raises harness.Failure when nothing was forwarded (a rate of 0 is no measurement)."""
    p = Program(argv, stdin=subprocess.PIPE)
    p.wait_for(r"testpmd> |Press enter|Checking link statuses|Done", timeout=60)
    p.send("set record-core-cycles on")
    p.send(f"start tx_first {in_flight_bursts}")
    p.wait_for(r"mac packet forwarding")
    # Warm up, then take two counter samples `seconds` apart.
    first = sample(p)
    t0 = time.monotonic()
    time.sleep(seconds)  # the measurement window itself, not a synchronisation
    second = sample(p)
    elapsed = time.monotonic() - t0
    idle = None
    if second == first:
        idle = "forwarded no frame"
        if on_emulator:
            idle += f"; the emulated device consumed {device_tx_wqes(p)} TX WQEs"
    mark = len(p.lines)
    p.send("stop")
    p.wait_for(r"^Done\.", start=mark)
    p.send("quit")
    p.finish()
    if idle:
        raise harness.Failure(idle)
    cycles = re.search(r"CPU cycles/packet=([\d.]+)", "\n".join(p.lines[mark:]))
    mpps = (second - first) / elapsed / 1e6
    return mpps, float(cycles.group(1)) if cycles else float("nan")


def sample(p):
    """Total RX packets over all ports."""
    return sum(s.get("RX-packets", 0) for s in testpmd_cli.show_port_stats(p).values())


def testpmd(prefix, eal, size, desc):
    # `size` is the frame size on the wire, with its 4-byte FCS (RFC 2544 sizes); testpmd's
    # --txpkts is the frame without FCS.
    return ["dpdk-testpmd", "-l", "0-1", "--file-prefix", prefix, "--huge-unlink", "-m", "512",
            *eal, "--", "-i", "--forward-mode=mac", f"--txpkts={size - 4}", f"--rxd={desc}",
            f"--txd={desc}", "--nb-cores=1",
            # Each port addresses the other: the vPort takes only its own MAC (and broadcast).
            f"--eth-peer=0,{harness.emu_mac(1)}", f"--eth-peer=1,{harness.emu_mac(0)}"]


def measure_mana(pmd, prefix, size, desc, seconds, bursts):
    # testpmd forwards on lcore 1; the emulator's device thread gets CPU 0 (testpmd's main lcore,
    # idle at its prompt), so the two busy loops never share a core. 1024 descriptors: a 2025
    # kernel with rdma-core >= 49 (libmana-max-wr=0).
    return measure([str(harness.MANA_EMU), "run", "--ports", "2", "--wire", "pair", "--doorbell",
                    "poll", "--limits", "2025", "--hw", "libmana-max-wr=0", "--device-cpu", "0",
                    "--", *testpmd(prefix, ["-d", str(pmd), "-a", EMU_BDF], size, desc)],
                   seconds, bursts, on_emulator=True)


def upstream_plugin(choice):
    """DPDK's own net_mana for the installed DPDK, or None with --upstream none."""
    if choice == "none":
        return None
    if choice:
        return harness._loadable(Path(choice).resolve())
    out = subprocess.run([str(TOP / "scripts" / "build-upstream-mana.sh")], capture_output=True,
                         text=True, check=True)
    return harness._loadable(Path(out.stdout.strip().splitlines()[-1]))


def cell(result, what):
    """A table cell: the figure, or why the run has none (a driver that could not forward)."""
    if isinstance(result, str):
        return f"n/a ({result})" if what == "mpps" else "n/a"
    return f"{result[0]:.2f}" if what == "mpps" else f"{result[1]:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pmd", default=str(harness.PMD), help="the MANA PMD to measure")
    ap.add_argument("--upstream", default="",
                    help="DPDK's own net_mana plugin (default: built by scripts/build-upstream-mana.sh); none: skip")
    ap.add_argument("--sizes", default="64,512,1518")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--markdown", help="write the results table to this file")
    args = ap.parse_args()
    pmd = harness._loadable(Path(args.pmd).resolve())
    upstream = upstream_plugin(args.upstream)
    desc, bursts = 1024, 16
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        null = measure(testpmd(f"bench-null-{os.getpid()}", ["--no-pci", "--vdev", "net_null0", "--vdev", "net_null1"],
                               size, desc), args.seconds, bursts)
        mana = measure_mana(pmd, f"bench-mana-{os.getpid()}", size, desc, args.seconds, bursts)
        dpdk = "not measured (--upstream none)"
        if upstream is not None:
            try:
                dpdk = measure_mana(upstream, f"bench-mana-up-{os.getpid()}", size, desc, args.seconds, bursts)
            except harness.Failure as e:  # reported, never a figure it did not produce
                harness.kill_leftovers()
                dpdk = str(e).split("\n", 1)[0]
        rows.append((size, mana, dpdk, null))
        up = dpdk if isinstance(dpdk, str) else f"{dpdk[0]:7.2f} Mpps {dpdk[1]:8.1f} cycles/pkt"
        print(f"{size:5d} B: net_mana {mana[0]:7.2f} Mpps {mana[1]:8.1f} cycles/pkt | DPDK's net_mana {up} | "
              f"net_null floor {null[0]:7.2f} Mpps {null[1]:8.1f} cycles/pkt", flush=True)
    if args.markdown:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
        up_name = Path(str(upstream)).name if upstream is not None else "none"
        lines = [f"Measured {time.strftime('%Y-%m-%d')} on {cpu}, {os.cpu_count()} cores; PMD `{Path(args.pmd).name}`,",
                 f"DPDK's own net_mana `{up_name}`; {args.seconds:g} s per point; `scripts/bench.sh`",
                 "(app/bench/mana_bench.py).", "",
                 "| frame (with FCS) | net_mana Mpps | net_mana cycles/packet | DPDK's net_mana Mpps "
                 "| DPDK's net_mana cycles/packet | net_null Mpps | net_null cycles/packet |",
                 "|---|---|---|---|---|---|---|"]
        for size, mana, dpdk, null in rows:
            lines.append(f"| {size} B | {cell(mana, 'mpps')} | {cell(mana, 'cycles')} | {cell(dpdk, 'mpps')} "
                         f"| {cell(dpdk, 'cycles')} | {cell(null, 'mpps')} | {cell(null, 'cycles')} |")
        Path(args.markdown).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
