#!/usr/bin/env python3
"""Fidelity cross-check of the emulator (design §4): DPDK's own net_mana, built locally from Debian's
DPDK 22.11 source package (never committed), forwards packets on the emulator unmodified, one queue
per port.

The application is DPDK's skeleton example (basicfwd, from Debian's dpdk-doc sources), not testpmd:
22.11's net_mana implements rxq_info_get but never marks its queues started, so testpmd 22.11
disables every forwarding stream of it (on hardware too). basicfwd forwards port 0 <-> port 1;
each port has a TAP wire, frames go in on one TAP and must come out of the other unchanged."""

import subprocess
from pathlib import Path

import harness
from harness import EMU_BDF, MANA_EMU, Program, emu_mac, expect
from tap_peer import bring_up, wait_until

from scapy.all import IP, UDP, AsyncSniffer, Ether, Raw, conf, sendp  # noqa: E402

conf.verb = 0
TOP = Path(__file__).resolve().parents[2]
TAP_IN, TAP_OUT = "mxup0", "mxup1"


def build(script):
    out = subprocess.run([str(TOP / "scripts" / script)], capture_output=True, text=True)
    if out.returncode != 0:
        raise harness.Failure(f"{script}: {out.stderr}")
    return Path(out.stdout.strip().splitlines()[-1])


def test_upstream_net_mana_forwards_on_the_emulator():
    upstream = harness._loadable(build("build-upstream-mana.sh"))
    basicfwd = build("build-dpdk-example.sh")
    p = Program([MANA_EMU, "run", "--ports", "2", "--wire", f"tap:{TAP_IN}", "--wire", f"tap:{TAP_OUT}",
                 "--", basicfwd, "-l", "0", "--file-prefix", "mana-upstream", "--huge-unlink", "-m",
                 "256", "-d", upstream, "-a", EMU_BDF])
    p.wait_for(r"Core 0 forwarding packets")
    bring_up(TAP_IN)
    bring_up(TAP_OUT)
    sniffer = AsyncSniffer(iface=TAP_OUT, lfilter=lambda f: f.haslayer(Raw) and bytes(f[Raw]).startswith(b"xcheck"))
    sniffer.start()
    frames = [Ether(src="02:00:00:00:00:01", dst=emu_mac(0)) / IP(src="198.18.0.1", dst="198.18.0.2")
              / UDP(sport=1000 + i, dport=9) / Raw(b"xcheck%04d" % i) for i in range(200)]
    sendp(frames, iface=TAP_IN)
    wait_until(lambda: len(sniffer.results or []) >= len(frames), 30, "frames out of the second port")
    got = sniffer.stop()
    p.stop()
    expect(sorted(bytes(f) for f in got) == sorted(bytes(f) for f in frames),
           f"{len(got)} frames came out, {len(frames)} went in, or they differ", p)


if __name__ == "__main__":
    harness.main([test_upstream_net_mana_forwards_on_the_emulator])
