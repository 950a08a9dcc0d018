#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fidelity cross-check of the emulator (doc/emulator.md): DPDK's own net_mana, built locally from Debian's
DPDK 22.11 source package (never committed), forwards packets on the emulator unmodified, with
trapped doorbells, one queue per port and two queues per port spread by RSS (checked against the
Toeplitz reference); and so does ours, in the same application.

The application is DPDK's l3fwd example (from Debian's dpdk-doc sources), not testpmd: 22.11's
net_mana implements rxq_info_get but never marks its queues started, so testpmd 22.11 disables every
forwarding stream of it (on hardware too), and the simpler skeleton example insists on promiscuous
mode, which neither MANA driver has. l3fwd routes 198.18.1.0/24 to port 1 (its default LPM table):
frames go in on port 0's TAP and must come out of port 1's with the MACs rewritten, the TTL one
lower and valid checksums."""

import json
import subprocess
from pathlib import Path

import harness
from harness import EMU_BDF, Program, TOP, emu_ctl, emu_mac, emu_run, expect
from tap_peer import MANA_DEFAULT_RSS_KEY, Capture, bring_up, toeplitz

from scapy.all import IP, UDP, Ether, Raw, conf, sendp  # noqa: E402

# Hugepages its DPDK processes take together at their peak (hugepages.py): l3fwd with DPDK's own net_mana and with ours, measured 218 MB.
HUGEPAGES_MB = 512

conf.verb = 0
TAP_IN, TAP_OUT = "mxup0", "mxup1"
NEXT_HOP = "02:00:00:00:00:99"


def build(script, *args):
    out = subprocess.run([str(TOP / "scripts" / script), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise harness.Failure(f"{script}: {out.stderr}")
    return Path(out.stdout.strip().splitlines()[-1])


def rq_packets(p):
    """Packets the emulator delivered to each receive queue of the VF (all ports), in queue order."""
    reply = emu_ctl(p, "counters", "0")
    return [rq["packets"] for rq in json.loads(reply.split(" ", 1)[1])["rqs"]]


def l3fwd_forwards(pmd, prefix, queues=1):
    """l3fwd with `queues` RX and TX queues per port (one lcore each, as 22.11's net_mana wants as
    many TX as RX queues); with several, RSS spreads flows of different source addresses."""
    l3fwd = build("build-dpdk-example.sh", "l3fwd")
    config = ",".join(f"({port},{q},{q})" for port in (0, 1) for q in range(queues))
    p = Program([*emu_run(["--ports", "2", "--doorbell", "trap", "--wire", f"tap:{TAP_IN}",
                           "--wire", f"tap:{TAP_OUT}"]), "--", l3fwd, "-l", f"0-{queues - 1}", "--file-prefix",
                 prefix, "--huge-unlink", "-d", pmd, "-a", EMU_BDF, "--", "-p", "0x3",
                 f"--config={config}", "--parse-ptype", f"--eth-dest=1,{NEXT_HOP}"])
    p.wait_for(rf"L3FWD:  -- lcoreid={queues - 1} portid=1")
    bring_up(TAP_IN)
    bring_up(TAP_OUT)
    capture = Capture(TAP_OUT, lambda f: f.haslayer(Raw) and bytes(f[Raw]).startswith(b"xcheck"))
    frames = [Ether(src="02:00:00:00:00:01", dst=emu_mac(0))
              / IP(src=f"198.18.0.{1 + i}", dst="198.18.1.7", ttl=64)
              / UDP(sport=1000 + i, dport=9) / Raw(b"xcheck%04d" % i) for i in range(200)]
    sendp(frames, iface=TAP_IN)
    capture.wait_for(len(frames))
    got = capture.stop()
    per_queue = rq_packets(p)
    status = p.stop()
    expect(status == 0, f"l3fwd exited {status} on SIGINT", p)
    # l3fwd asks for RSS over IP addresses only (RTE_ETH_RSS_IP), with the driver's default key, but
    # the hardware ignores the requested fields and hashes UDP over addresses and ports
    # (doc/hardware.md §2.5); the indirection table holds queue j at entry j (a power-of-two
    # count), so the queue is the hash modulo the count.
    want = [0] * queues
    for f in frames:
        four_tuple = (bytes(map(int, f[IP].src.split("."))) + bytes(map(int, f[IP].dst.split(".")))
                      + f[UDP].sport.to_bytes(2, "big") + f[UDP].dport.to_bytes(2, "big"))
        want[toeplitz(MANA_DEFAULT_RSS_KEY, four_tuple) % queues] += 1
    expect(per_queue == want + [0] * queues,
           f"packets per receive queue {per_queue}, Toeplitz reference {want} on port 0", p)
    expect(len(got) == len(frames), f"{len(got)} frames came out, {len(frames)} went in", p)
    sent = {bytes(f[Raw]): f for f in frames}
    for f in got:
        orig = sent[bytes(f[Raw])]
        expect(f[Ether].src.lower() == emu_mac(1) and f[Ether].dst.lower() == NEXT_HOP,
               f"MACs {f[Ether].src} -> {f[Ether].dst}", p)
        expect(f[IP].ttl == orig[IP].ttl - 1, f"TTL {f[IP].ttl}", p)
        fixed = IP(bytes(f[IP]))
        del fixed.chksum
        expect(IP(bytes(fixed)).chksum == f[IP].chksum, f"IP checksum {f[IP].chksum:#x} wrong", p)
        expect(bytes(f[UDP]) == bytes(orig[UDP]), "UDP part changed", p)


def test_upstream_net_mana_forwards_on_the_emulator():
    l3fwd_forwards(harness._loadable(build("build-upstream-mana.sh")), "mana-up")


def test_upstream_net_mana_spreads_two_queues_by_rss():
    l3fwd_forwards(harness._loadable(build("build-upstream-mana.sh")), "mana-up-rss", queues=2)


def test_our_net_mana_forwards_in_l3fwd():
    l3fwd_forwards(harness.PMD, "mana-l3fwd")


def test_our_net_mana_spreads_two_queues_by_rss():
    l3fwd_forwards(harness.PMD, "mana-l3fwd-rss", queues=2)


if __name__ == "__main__":
    harness.main([test_upstream_net_mana_forwards_on_the_emulator,
                  test_upstream_net_mana_spreads_two_queues_by_rss, test_our_net_mana_forwards_in_l3fwd,
                  test_our_net_mana_spreads_two_queues_by_rss])
