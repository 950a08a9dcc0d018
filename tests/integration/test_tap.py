#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""net_mana against real Linux peers through a TAP wire: RSS hashes and queues checked against a
Toeplitz reference, TX checksum offload checked by scapy on the wire, bad RX checksums flagged in
testpmd's csum engine, and Linux ping from a network namespace answered by testpmd's icmpecho."""

import re
import subprocess
import tempfile
from pathlib import Path

import harness
from harness import emu_ctl, emu_mac, expect
from launch import tap_testpmd
from tap_peer import MANA_DEFAULT_RSS_KEY, Capture, toeplitz, wait_until
from testpmd_cli import FORWARDING_STARTED

from scapy.all import IP, TCP, UDP, Dot1Q, Ether, Raw, conf, sendp  # noqa: E402

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool, measured 370 MB.
HUGEPAGES_MB = 512

conf.verb = 0
TAP = "manatap0"
PORT_MAC = emu_mac(0)


def flow_frames(count):
    frames = []
    for i in range(count):
        src_mac = f"02:00:00:00:{i >> 8:02x}:{i & 0xFF:02x}"  # the flow's index, seen in testpmd
        ip = IP(src=f"198.18.{1 + i // 200}.{1 + i % 200}", dst="198.19.0.1")
        l4 = TCP(sport=1024 + i, dport=80) if i % 2 else UDP(sport=1024 + i, dport=53)
        frames.append(Ether(src=src_mac, dst=PORT_MAC) / ip / l4 / Raw(b"x" * 18))
    return frames


def expected_hash(frame):
    ip, l4 = frame[IP], frame[IP].payload
    data = (bytes(map(int, ip.src.split("."))) + bytes(map(int, ip.dst.split(".")))
            + l4.sport.to_bytes(2, "big") + l4.dport.to_bytes(2, "big"))
    return toeplitz(MANA_DEFAULT_RSS_KEY, data)


def check_rss(queues):
    p = tap_testpmd(TAP, f"mana-rss{queues}", [f"--rxq={queues}", f"--txq={queues}",
                                           "--forward-mode=rxonly"])
    # DPDK's own net_mana flags an RSS hash only for rx_hash_type equal to a composite mask, never
    # for the single NDIS bit the hardware reports (doc/hardware.md §4.10): with that driver on such
    # a profile, testpmd shows only the queue ("Receive queue=").
    hash_shown = not (harness.SYSTEM_PMD and harness.emu_hw().get("hash-type", "bit") == "bit")
    p.send("set verbose 1")
    p.send("start")
    p.wait_for(FORWARDING_STARTED)
    frames = flow_frames(400)
    sendp(frames, iface=TAP)
    # testpmd (22.11 and 24.11) shows "Receive queue=0x.." on every line, and before it
    # "RSS hash=0x.. - RSS queue=0x.." when the driver flags a hash.
    rx = re.compile(r"src=02:00:00:00:([0-9A-F]{2}):([0-9A-F]{2}) .*(?:RSS|Receive) queue=0x([0-9a-f]+)")
    rss_hash = re.compile(r"RSS hash=0x([0-9a-f]+)")
    seen = {}

    def all_seen():
        for line in p.lines:
            m = rx.search(line)
            if m:
                h = rss_hash.search(line)
                seen[int(m.group(1), 16) << 8 | int(m.group(2), 16)] = (
                    int(h.group(1), 16) if h else None, int(m.group(3), 16))
        return len(seen) == len(frames)

    wait_until(lambda: p.pump() is not None and all_seen(), 60, "all flows at testpmd")
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)
    used = set()
    for i, frame in enumerate(frames):
        h, q = seen[i]
        want = expected_hash(frame)
        if hash_shown:
            expect(h == want, f"flow {i}: hash {h if h is None else hex(h)}, Toeplitz reference {want:#x}", p)
        else:
            expect(h is None, f"flow {i}: hash {h if h is None else hex(h)} flagged for a single-bit hash type", p)
        # The 64-entry table holds queue (j mod queues) at entry j.
        expect(q == (want & 63) % queues, f"flow {i}: Toeplitz hash {want:#x} on queue {q}", p)
        used.add(q)
    expect(used == set(range(queues)), f"only queues {sorted(used)} used", p)


def test_rss_4_queues():
    check_rss(4)


def test_rss_8_queues():
    check_rss(8)


def test_checksum_offload_on_the_wire_and_bad_rx_checksums():
    p = tap_testpmd(TAP, "mana-csum", ["--forward-mode=csum", "--port-topology=loop", "--enable-rx-cksum"])
    for cmd in ("port stop 0", "csum set ip hw 0", "csum set udp hw 0", "csum set tcp hw 0",
                "port start 0"):
        p.send(cmd)
    p.send("start")
    p.wait_for(FORWARDING_STARTED)
    capture = Capture(TAP, lambda f: f.haslayer(Ether) and f[Ether].src.lower() == PORT_MAC)
    good = [Ether(dst=PORT_MAC) / IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=9, dport=9) / Raw(b"a" * 30),
            Ether(dst=PORT_MAC) / IP(src="198.18.0.1", dst="198.18.0.2") / TCP(sport=9, dport=9) / Raw(b"b" * 30)]
    bad_ip = [Ether(dst=PORT_MAC) / IP(src="198.18.0.1", dst="198.18.0.2", chksum=0x1234) / UDP() / Raw(b"c" * 30)]
    bad_l4 = [Ether(dst=PORT_MAC) / IP(src="198.18.0.1", dst="198.18.0.2") / UDP(chksum=0x4321) / Raw(b"d" * 30),
              Ether(dst=PORT_MAC) / IP(src="198.18.0.1", dst="198.18.0.2") / TCP(chksum=0x4321) / Raw(b"e" * 30)]
    frames = good * 5 + bad_ip * 3 + bad_l4 * 4
    sendp(frames, iface=TAP)
    try:
        capture.wait_for(len(frames))
    except harness.Failure as e:
        raise harness.Failure(f"{e}; emulator: {emu_ctl(p, 'counters', '0')}")
    captured = capture.stop()
    p.send("stop")
    m = p.wait_for(r"Bad-ipcsum:\s+(\d+)\s+Bad-l4csum:\s+(\d+)")
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)
    expect(int(m.group(1)) == 3 and int(m.group(2)) == 8,
           f"testpmd counted bad checksums ip={m.group(1)} l4={m.group(2)}, sent 3 and 8", p)
    expect(len(captured) == len(frames), f"{len(captured)} of {len(frames)} frames came back", p)
    for f in captured:
        ip = f[IP]
        fixed = Ether(bytes(f))
        del fixed[IP].chksum
        l4 = fixed[IP].payload
        del l4.chksum
        fixed = Ether(bytes(fixed))
        expect(ip.chksum == fixed[IP].chksum, f"IP checksum {ip.chksum:#x} != {fixed[IP].chksum:#x}")
        expect(ip.payload.chksum == fixed[IP].payload.chksum,
               f"L4 checksum {ip.payload.chksum:#x} != {fixed[IP].payload.chksum:#x}")


def test_vlan_strip_and_insert():
    # mac forwarding back out of the same port.
    p = tap_testpmd(TAP, "mana-vlan", ["--forward-mode=mac", "--port-topology=loop"])
    p.send("set verbose 1")
    p.send("start")
    p.wait_for(FORWARDING_STARTED)
    tagged = Ether(src="02:00:00:00:00:07", dst=PORT_MAC) / Dot1Q(vlan=100, prio=5) / \
        IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=7, dport=7) / Raw(b"vlan-in")
    received = r"src=02:00:00:00:00:07 .* type=0x([0-9a-f]+) .* length=(\d+) .*VLAN tci=0x([0-9a-f]+)"

    def frames_back():
        return Capture(TAP, lambda f: f.haslayer(Raw) and bytes(f[Raw]).startswith(b"vlan")
                       and f[Ether].src.lower() == PORT_MAC)

    # RX without VLAN_STRIP: the NIC strips the tag and reports the VID only (doc/hardware.md §4.10); the
    # driver puts the tag back into the data (PCP 0), as DPDK's semantics want, and it goes back
    # out with the frame.
    capture = frames_back()
    sendp([tagged] * 4, iface=TAP)
    m = p.wait_for(received)
    expect(m.group(1) == "8100" and int(m.group(2)) == len(tagged) and int(m.group(3), 16) == 100,
           f"frame with the tag put back: type {m.group(1)}, length {m.group(2)}, tci {m.group(3)}", p)
    capture.wait_for(4)
    out = capture.stop()
    expect(len(out) == 4 and all(f[Dot1Q].vlan == 100 and f[Dot1Q].prio == 0 for f in out),
           f"frames back on the wire: {[f.summary() for f in out]}", p)

    # With VLAN_STRIP the tag stays out of the data and the mbuf says so; testpmd asks for VID 200
    # on everything it sends back and the NIC inserts it.
    for cmd in ("stop", "port stop 0", "port config 0 rx_offload vlan_strip on", "tx_vlan set 0 200",
                "port start 0"):
        p.send(cmd)
    p.send("start")
    p.wait_for(FORWARDING_STARTED, start=p.last_index + 1)
    capture = frames_back()
    sendp([tagged] * 4, iface=TAP)
    m = p.wait_for(received, start=p.last_index + 1)
    expect(m.group(1) == "0800" and int(m.group(2)) == len(tagged) - 4 and int(m.group(3), 16) == 100,
           f"stripped frame: type {m.group(1)}, length {m.group(2)}, tci {m.group(3)}", p)
    # testpmd asked for no packet types at start (rte_eth_dev_set_ptypes): ours gives them all the
    # same, L3 read from the frame (RSS is off), as DTS's checksum suite needs. (DPDK's own
    # net_mana, MANA_PMD=system, reports none.)
    if not harness.SYSTEM_PMD:
        expect("hw ptype: L2_ETHER L3_IPV4_EXT_UNKNOWN L4_UDP" in p.lines[p.last_index],
               f"packet type of the stripped frame: {p.lines[p.last_index]}", p)
    capture.wait_for(4)
    out = capture.stop()
    expect(len(out) == 4 and all(f[Dot1Q].vlan == 200 and not f[Dot1Q].payload.haslayer(Dot1Q)
                                 for f in out),
           f"frames back on the wire: {[f.summary() for f in out]}", p)

    # Stripping turned off on the started port (rte_eth_dev_set_vlan_offload): the tag is back in
    # the data from the next burst on. (DPDK's own net_mana has no vlan_offload_set.)
    if harness.SYSTEM_PMD:
        p.send("quit")
        expect(p.finish() == 0, "testpmd failed", p)
        return
    for cmd in ("stop", "port stop 0", "tx_vlan reset 0", "port start 0"):
        p.send(cmd)
    p.wait_for(r"^Port 0: [0-9A-F]{2}:", start=p.last_index + 1)  # started again: its MAC line
    mark = p.last_index + 1  # (every frame line of the phase before comes before it)
    p.send("vlan set strip off 0")
    p.send("show port info 0")  # (its answer comes after the command before it was done)
    p.wait_for(r"^\s*strip off, ", start=mark)
    expect(not any("failed" in line for line in p.lines[mark:]), "vlan set strip off failed", p)
    p.send("start")
    p.wait_for(FORWARDING_STARTED, start=mark)
    capture = frames_back()
    sendp([tagged] * 4, iface=TAP)
    m = p.wait_for(received, start=mark)
    expect(m.group(1) == "8100" and int(m.group(2)) == len(tagged),
           f"frame after strip off: type {m.group(1)}, length {m.group(2)}", p)
    capture.wait_for(4)
    out = capture.stop()
    expect(len(out) == 4 and all(f[Dot1Q].vlan == 100 for f in out),
           f"frames back on the wire: {[f.summary() for f in out]}", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_ping_from_netns_answered_by_icmpecho():
    ns = "mana-ping"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    p = tap_testpmd(TAP, "mana-ping", ["--forward-mode=icmpecho"], netns=ns)
    try:
        subprocess.run(["ip", "-n", ns, "addr", "add", "198.18.77.1/24", "dev", TAP], check=True)
        p.send("start")
        p.wait_for(FORWARDING_STARTED)
        pcap = Path(tempfile.mkdtemp(prefix="mana-ping.")) / "ping.pcap"
        dump = harness.Program(["ip", "netns", "exec", ns, "tcpdump", "-i", TAP, "-nn", "-U", "-c", "10",
                                "-w", str(pcap), "icmp"])
        dump.wait_for(r"listening on")
        out = subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "5", "-i", "0.2", "-W", "5",
                              "198.18.77.2"], capture_output=True, text=True, timeout=60)
        expect(" 0% packet loss" in out.stdout, f"ping: {out.stdout}{out.stderr}", p)
        expect(dump.finish(timeout=30) == 0, "tcpdump did not see 10 ICMP packets", dump)
        seen = subprocess.run(["tcpdump", "-nn", "-r", str(pcap)], capture_output=True, text=True).stdout
        expect(seen.count("ICMP echo request") == 5 and seen.count("ICMP echo reply") == 5,
               f"tcpdump saw: {seen}", p)
        p.send("stop")
        p.send("quit")
        expect(p.finish() == 0, "testpmd failed", p)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_linux_stack_answers_frames_from_the_port():
    """testpmd sends one burst of UDP to a closed port of the host in the namespace; the Linux stack
    answers each with ICMP port unreachable, which testpmd receives."""
    ns = "mana-linux"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    p = tap_testpmd(TAP, "mana-linux", ["--forward-mode=rxonly", "--tx-ip=198.18.77.2,198.18.77.1",
                                   "--tx-udp=4000,9"], netns=ns)
    try:
        host_mac = subprocess.run(["ip", "-n", ns, "-br", "link", "show", TAP], capture_output=True,
                                  text=True, check=True).stdout.split()[2]
        for cmd in (["addr", "add", "198.18.77.1/24", "dev", TAP],
                    ["neigh", "replace", "198.18.77.2", "lladdr", PORT_MAC, "dev", TAP]):
            subprocess.run(["ip", "-n", ns, *cmd], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.icmp_ratelimit=0"], check=True)
        p.send(f"set eth-peer 0 {host_mac}")
        p.send("set verbose 1")
        p.send("start tx_first")
        p.wait_for(FORWARDING_STARTED)
        # 32 frames went out; every one comes back as ICMP (type 0x0800 from the host's MAC).
        rx = re.compile(rf"src={host_mac.upper()} - dst={PORT_MAC.upper()} .*type=0x0800")
        wait_until(lambda: p.pump() is not None and sum(bool(rx.search(l)) for l in p.lines) >= 32, 30,
                   "32 ICMP answers from the Linux stack")
        p.send("quit")
        expect(p.finish() == 0, "testpmd failed", p)
        counters = subprocess.run(["ip", "netns", "exec", ns, "nstat", "-az", "UdpNoPorts"],
                                  capture_output=True, text=True).stdout
        expect(re.search(r"UdpNoPorts\s+(3[2-9]|[4-9]\d|\d{3,})", counters), f"host counters: {counters}", p)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


if __name__ == "__main__":
    harness.main([test_rss_4_queues, test_rss_8_queues,
                  test_checksum_offload_on_the_wire_and_bad_rx_checksums, test_vlan_strip_and_insert,
                  test_ping_from_netns_answered_by_icmpecho,
                  test_linux_stack_answers_frames_from_the_port])
