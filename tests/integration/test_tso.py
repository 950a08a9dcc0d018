#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TCP segmentation offload end to end: a Linux TCP sender in one network namespace, a TAP wire,
emulated port 0, testpmd's csum engine asking for TSO with an MSS below the sender's on port 1, a
TAP wire, a Linux TCP receiver in another namespace. The receiver must get the byte stream intact
(its SHA-256), over IPv4 and IPv6; every data frame on the receiving wire must be at most one MSS
long (so every packet was segmented by the NIC), and no TX error may be counted."""

import hashlib
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import harness
from harness import emu_ctl, emu_mac, expect, testpmd_on_emu
from testpmd_cli import FORWARDING_STARTED, xstats

from scapy.all import IP, TCP, Ether, IPv6, rdpcap  # noqa: E402

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd with its default mbuf pool, measured 370 MB.
HUGEPAGES_MB = 512

TAPS = ("tsotap0", "tsotap1")
NETNS = ("tso-send", "tso-recv")
PORT_MACS = (emu_mac(0), emu_mac(1))
MSS = 500  # below the sender's 1448 (MTU 1500 with timestamps): every data packet is segmented
STREAM_BYTES = 4 * 1024 * 1024
# (family, sender address, receiver address, prefix length)
FAMILIES = (("ipv4", "198.18.90.1", "198.18.90.2", 24),
            ("ipv6", "fd00:90::1", "fd00:90::2", 64))

# The receiver: accepts one connection, hashes everything until EOF, prints length and hash.
RECEIVER = """
import hashlib, socket, sys
s = socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
print('listening', flush=True)
s.settimeout(60)
c, _ = s.accept()
c.settimeout(60)
h, n = hashlib.sha256(), 0
while True:
    d = c.recv(1 << 16)
    if not d:
        break
    h.update(d)
    n += len(d)
print('received', n, h.hexdigest(), flush=True)
"""

# The sender: connects and writes the stream (bytes from a fixed seed).
SENDER = """
import random, socket, sys

data = random.Random(11).randbytes(int(sys.argv[3]))
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=60)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
s.recv(1)
print('sent', flush=True)
"""


def stream():
    return random.Random(11).randbytes(STREAM_BYTES)


def ns_run(ns, *cmd):
    subprocess.run(["ip", "netns", "exec", ns, *cmd], check=True, capture_output=True)


def setup_netns():
    """Each TAP in its namespace with both address families; the far host's addresses resolve to the
    MAC of the MANA port on this side (static neighbours: no ARP or ND through testpmd)."""
    for ns in NETNS:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    for i, (tap, ns) in enumerate(zip(TAPS, NETNS)):
        harness.wait_for_interface(tap)
        subprocess.run(["ip", "netns", "add", ns], check=True)
        subprocess.run(["ip", "link", "set", tap, "netns", ns], check=True)
        ns_run(ns, "ip", "link", "set", tap, "up")
        for _family, a, b, plen in FAMILIES:
            mine, far = (a, b) if i == 0 else (b, a)
            ns_run(ns, "ip", "addr", "add", f"{mine}/{plen}", "dev", tap, "nodad")
            ns_run(ns, "ip", "neigh", "replace", far, "lladdr", PORT_MACS[i], "dev", tap, "nud",
                   "permanent")
    macs = []
    for tap, ns in zip(TAPS, NETNS):
        out = subprocess.run(["ip", "-n", ns, "-br", "link", "show", tap], capture_output=True,
                             text=True, check=True).stdout
        macs.append(out.split()[2])
    return macs


def transfer(family, a, b, port):
    """Sends the stream from namespace 0 to namespace 1; returns the receiver's (length, hash)."""
    py = sys.executable
    rx = harness.Program(["ip", "netns", "exec", NETNS[1], py, "-c", RECEIVER, b, str(port)])
    rx.wait_for("listening")
    tx = harness.Program(["ip", "netns", "exec", NETNS[0], py, "-c", SENDER, b, str(port),
                          str(STREAM_BYTES)])
    m = rx.wait_for(r"received (\d+) ([0-9a-f]+)", timeout=120)
    expect(tx.finish(timeout=60) == 0, f"{family} sender failed", tx)
    expect(rx.finish(timeout=30) == 0, f"{family} receiver failed", rx)
    return int(m.group(1)), m.group(2)


def check_frames(pcap):
    """Every TCP frame from port 1 carries at most MSS bytes, and data frames were seen."""
    data_frames = full = 0
    for f in rdpcap(str(pcap)):
        if not f.haslayer(TCP) or f[Ether].src.lower() != PORT_MACS[1]:
            continue
        ip = f[IP] if f.haslayer(IP) else f[IPv6]
        ip_len = ip.len if f.haslayer(IP) else ip.plen + 40
        payload = ip_len - (ip.ihl * 4 if f.haslayer(IP) else 40) - f[TCP].dataofs * 4
        expect(payload <= MSS, f"a frame with {payload} TCP payload bytes, MSS {MSS}: {f.summary()}")
        data_frames += payload > 0
        full += payload == MSS
    return data_frames, full


def xstats_errors(p, port):
    """The port's non-zero TX error xstats (a full ring, `tx_qN_ring_full`, is back-pressure, not
    an error: testpmd counts those packets as TX-dropped)."""
    return {k: v for k, v in xstats(p, port).items()
            if re.fullmatch(r"tx_\w*(?:error|drop|fail|segs|split|readonly|invalid)\w*", k) and v != 0}


def check_tso(families, hw=()):
    opts = ["--ports", "2", "--wire", f"tap:{TAPS[0]}", "--wire", f"tap:{TAPS[1]}", *hw]
    p = testpmd_on_emu(opts, "tso", ["-i", "--nb-cores=1", "--forward-mode=csum",
                                     "--port-topology=paired", "--enable-rx-cksum"],
                       interactive=True)
    pcap = Path(tempfile.mkdtemp(prefix="mana-tso.")) / "rx.pcap"
    try:
        p.wait_for(rf"Port 1: {PORT_MACS[1].upper()}")
        macs = setup_netns()
        for cmd in ("port stop all", "csum set ip hw 0", "csum set tcp hw 0", "csum set ip hw 1",
                    "csum set tcp hw 1", f"tso set {MSS} 1", f"set eth-peer 0 {macs[0]}",
                    f"set eth-peer 1 {macs[1]}", "port start all"):
            p.send(cmd)
        # (24.11's testpmd drops the "TSO " of 22.11's line)
        p.wait_for(rf"segment size for non-tunneled packets is {MSS}")
        mark = len(p.lines)
        p.send("show txq info 1 0")
        p.wait_for(r"Burst mode: Scalar, checksum, multi-segment, TSO$", start=mark)
        p.send("start")
        p.wait_for(FORWARDING_STARTED)
        dump = harness.Program(["ip", "netns", "exec", NETNS[1], "tcpdump", "-i", TAPS[1], "-nn",
                                "-U", "-s", "128", "-B", "16384", "-w", str(pcap), "tcp"])
        dump.wait_for(r"listening on")
        want = hashlib.sha256(stream()).hexdigest()
        for i, (family, a, b, _plen) in enumerate(families):
            n, digest = transfer(family, a, b, 5201 + i)
            expect(n == STREAM_BYTES and digest == want,
                   f"{family}: receiver got {n} bytes, sha256 {digest}; sent {STREAM_BYTES}, {want}"
                   f"; emulator: {emu_ctl(p, 'counters', '0')}", p)
        status = dump.stop()
        expect(status == 0, f"tcpdump exited {status} on SIGINT", dump)
        data_frames, full = check_frames(pcap)
        # tcpdump may drop frames on a loaded machine: what it kept must all be segments, and
        # enough of them (the sender's 1448-byte packets make 2 full segments each).
        expect(data_frames >= 1000 and full >= 500,
               f"{data_frames} data frames ({full} of {MSS} bytes) on the receiving wire")
        errors = {**xstats_errors(p, 0), **xstats_errors(p, 1)}
        expect(not errors, f"TX error xstats: {errors}", p)
        p.send("quit")
        expect(p.finish() == 0, "testpmd failed", p)
    finally:
        for ns in NETNS:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_tso_to_linux_tcp_receivers():
    check_tso(FAMILIES)


def test_tso_with_fixed_ipv4_ids():
    """The open behaviour of the segments' IPv4 ids (doc/hardware.md §9): the other choice."""
    check_tso(FAMILIES[:1], ["--hw", "tso-ip-id=fixed"])


if __name__ == "__main__":
    harness.main([test_tso_to_linux_tcp_receivers, test_tso_with_fixed_ipv4_ids])
