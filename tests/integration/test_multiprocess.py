#!/usr/bin/env python3
"""Other DPDK processes next to a primary testpmd on the emulator: dpdk-proc-info as a secondary
process (attaching to net_mana's ports, reading stats and xstats), dpdk-telemetry.py querying the
primary, two primaries joined by an shm wire, and hot removal of the VF (removal event)."""

import json
import os
import re
import subprocess

import harness
from harness import (EMU_BDF, Program, child_environ, emu_ctl, emu_mac, emu_run, expect,
                     parse_port_stats, pmd_args, testpmd_on_emu)

PAIR_PEERS = [f"--eth-peer=0,{emu_mac(1)}", f"--eth-peer=1,{emu_mac(0)}"]


def emulated_env(p):
    """The environment `mana-emu run` gave the primary: a secondary needs the same view."""
    return {k: child_environ(p, k) for k in ("SYSFS_PCI_DEVICES", "MANA_EMU_CONFIG", "LD_PRELOAD")}


def forwarding_primary(prefix):
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair"], prefix,
                       ["--forward-mode=mac", "--auto-start", "--tx-first", "--stats-period", "1",
                        *PAIR_PEERS], secondaries=True)
    p.wait_for(r"Rx-pps:\s+[1-9]")
    return p


def proc_info(p, prefix, *what):
    out = subprocess.run(["dpdk-proc-info", "--file-prefix", prefix, *pmd_args(), "-a", EMU_BDF,
                          "--", *what], capture_output=True, text=True, timeout=60,
                         env={**os.environ, **emulated_env(p)})
    expect(out.returncode == 0, f"dpdk-proc-info {what} failed ({out.returncode}): {out.stdout}{out.stderr}", p)
    expect("mana-emu:" not in out.stderr, f"emulator complained: {out.stderr}", p)
    return out.stdout


def test_proc_info_secondary_reads_stats():
    p = forwarding_primary("mana-mp")
    text = proc_info(p, "mana-mp", "--stats")
    stats = parse_port_stats(text.replace("NIC statistics for port", "#### NIC statistics for port"))
    expect(all(stats.get(q, {}).get("RX-packets", 0) > 0 for q in (0, 1)),
           f"secondary saw no traffic: {text[-3000:]}", p)
    text = proc_info(p, "mana-mp", "--xstats")
    expect(re.search(r"rx_q0_packets: [1-9]", text) and "tx_cqe_invalid_oob_errors" in text,
           f"xstats missing: {text[-3000:]}", p)
    expect(p.stop() == 0, "primary failed", p)


def test_secondary_process_forwards_its_own_queues():
    """testpmd's symmetric multi-process mode: the primary forwards queue 0 of both ports, a
    secondary testpmd queue 1 (its own burst calls, doorbells through the primary's doorbell page,
    its own mempool registered by the primary)."""
    common = ["--forward-mode=mac", "--rxq=2", "--txq=2", "--num-procs=2", "--txonly-multi-flow",
              "--stats-period", "1", "--auto-start", "--tx-first", *PAIR_PEERS]
    primary = testpmd_on_emu(["--ports", "2", "--wire", "pair"], "mana-smp", [*common, "--proc-id=0"],
                             eal_extra=["-a", EMU_BDF, "--proc-type=primary"], secondaries=True)
    primary.wait_for(r"Rx-pps:\s+[1-9]")
    secondary = Program(["dpdk-testpmd", "-l", "0-1", "--file-prefix", "mana-smp", "--proc-type=secondary",
                         *pmd_args(), "-a", EMU_BDF, "--", *common, "--proc-id=1"],
                        env=emulated_env(primary))
    secondary.wait_for(r"Rx-pps:\s+[1-9]")
    expect(secondary.stop() == 0, "secondary failed", secondary)
    fwd = harness.parse_forward_stats(secondary.output())
    expect(all(fwd.get(q, {}).get("RX-packets", 0) > 0 and fwd.get(q, {}).get("TX-packets", 0) > 0
               for q in (0, 1)), f"the secondary's own streams: {fwd}", secondary)
    expect(primary.stop() == 0, "primary failed", primary)


def test_telemetry_reports_port_stats():
    p = forwarding_primary("mana-tel")
    out = subprocess.run(["dpdk-telemetry.py", "-f", "mana-tel"], input="/ethdev/stats,0\n",
                         capture_output=True, text=True, timeout=60)
    expect(out.returncode == 0, f"dpdk-telemetry.py: {out.stdout}{out.stderr}", p)
    replies = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    stats = [r["/ethdev/stats"] for r in replies if "/ethdev/stats" in r]
    expect(stats and stats[-1]["ipackets"] > 0 and stats[-1]["ibytes"] > 0, f"{out.stdout}", p)
    expect(p.stop() == 0, "primary failed", p)


def test_two_primaries_over_shm_wire():
    mac_a, mac_b = "00:0d:3a:00:0a:01", "00:0d:3a:00:0b:01"
    b = Program([*emu_run(["--mac", mac_b, "--wire", "shm:manatest"]), "--", "dpdk-testpmd",
                 *harness.eal_args("mana-shm-b", ["-a", EMU_BDF]), "--", "--forward-mode=rxonly",
                 "--auto-start", "--stats-period", "1"])
    b.wait_for(r"Port 0: " + mac_b.upper())
    a = Program([*emu_run(["--mac", mac_a, "--wire", "shm:manatest"]), "--", "dpdk-testpmd",
                 *harness.eal_args("mana-shm-a", ["-a", EMU_BDF]), "--", "--forward-mode=txonly",
                 "--auto-start", "--stats-period", "1", f"--eth-peer=0,{mac_b}"])
    b.wait_for(r"RX-packets:\s+[1-9]\d{3,}")
    expect(a.stop() == 0, "sender failed", a)
    expect(b.stop() == 0, "receiver failed", b)


def test_hot_removal_raises_removal_event():
    p = testpmd_on_emu(["--ports", "1"], "mana-rmv", ["--forward-mode=txonly", "--auto-start",
                                                       "--stats-period", "1"])
    p.wait_for(r"Tx-pps:\s+[1-9]")
    emu_ctl(p, "remove", "0")
    p.wait_for(r"Port 0: device removal event")
    expect(p.stop() == 0, "testpmd did not survive the removal", p)


if __name__ == "__main__":
    harness.main([test_proc_info_secondary_reads_stats, test_secondary_process_forwards_its_own_queues,
                  test_telemetry_reports_port_stats,
                  test_two_primaries_over_shm_wire, test_hot_removal_raises_removal_event])
