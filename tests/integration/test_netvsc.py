#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Azure's recommended MANA setup: Debian's unmodified net_netvsc (Debian 12's DPDK
22.11; Debian 13's 24.11 under scripts/test-dpdk.sh 24.11) on the emulated Hyper-V synthetic NIC
(`mana-emu run --uio-netvsc 0`: the VMBus device bound to uio_hv_generic, doc/emulator.md "The
synthetic NIC") with our net_mana as its VF. LISA's testpmd lines, which need a testpmd that
forwards over a netvsc port (24.11), are in test_netvsc_testpmd.py.

- Azure's documented testpmd line: net_netvsc probes the synthetic NIC, finds our port by MAC,
  takes it as its VF and switches the data path to it. (22.11's testpmd forwards nothing over a
  netvsc port: net_netvsc 22.11 never marks its queues started, fixed in 23.11; doc/emulator.md
  "The synthetic NIC". Traffic is therefore shown with l3fwd.)
- DPDK's l3fwd on the netvsc port over a TAP wire: unicast frames for the MAC go through our VF
  (RX and TX), broadcast frames stay on the synthetic path (RX) and leave through our VF, with
  exact counts from the frames captured, the emulator's VF counters and the synthetic NIC's counters.
- Azure's servicing: the VF is removed while l3fwd forwards, unicast traffic continues on the
  synthetic path, the VF comes back (PCI hot-add event), net_netvsc hot-plugs it
  ("netvsc_hotplug_retry(): Found matching MAC address, adding device") and traffic moves back
  to our VF."""

import json
import re
import subprocess
import time

from emulator import device_port, netvsc_counters
import harness
from harness import EMU_BDF, Program, TOP, emu_ctl, emu_mac, emu_run, expect, repeat_until
from netvsc import HOTPLUG_LINE, NETVSC_PORT
from tap_peer import Capture, bring_up

from scapy.all import IP, UDP, Ether, Raw, conf, sendp  # noqa: E402

conf.verb = 0

# Hugepages its DPDK processes take at their peak (hugepages.py): one testpmd or l3fwd with its
# mbuf pool: testpmd (Azure's line) measured 388 MB, l3fwd 220 MB.
HUGEPAGES_MB = 512

TAP = "mxnvsc0"
MAC = emu_mac(0)
AZURE_LINE = ["--vdev", f"{EMU_BDF},mac={MAC}", "--", "--forward-mode=txonly", "--auto-start",
              "--txd=128", "--rxd=128", "--stats", "2"]


def azure_line(hw=(), vf_at_probe=True):
    # Azure's line, -l 1-3 mapped onto two CPUs as integration-install does.
    p = Program([*emu_run(["--uio-netvsc", "0", *hw]), "--", "dpdk-testpmd", "--lcores", "1@0,2@1,3@0",
                 "--file-prefix", "mana-netvsc", "--huge-unlink", *harness.pmd_args(),
                 *AZURE_LINE])
    if not vf_at_probe:
        # Not announced at probe: the application saw our port as port 0 and configured it before
        # net_netvsc, starting, took it as its VF (DPDK 22.11 takes a port that is in use).
        p.wait_for(r"Configuring Port 0")
    p.wait_for(r"hn_vf_attach\(\): found matching VF port 0", start=p.last_index)
    p.wait_for(rf"Port {NETVSC_PORT}: {MAC.upper()}")
    p.wait_for(r"NIC statistics for port %d" % NETVSC_PORT)
    c = netvsc_counters(p)
    expect(c["nvsp_version"] == 0x60001, f"NVSP version {c['nvsp_version']:#x}", p)
    expect(c["data_path_vf"] == 1, f"the guest did not switch the data path to the VF: {c}", p)
    # testpmd turns promiscuous mode on: net_netvsc sets the PROMISCUOUS filter (0x20).
    expect(c["packet_filter"] == 0x20, f"the guest's packet filter: {c}", p)
    expect(c["malformed"] == 0 and c["malformed_rings"] == 0, f"malformed packets: {c}", p)
    # Our port is started underneath (its queues exist) and hidden from the application.
    live = json.loads(emu_ctl(p, "live", "0")[3:])
    expect(live["sqs"] == 1 and live["contexts"] == 1, f"the VF's queues: {live}")
    if vf_at_probe:
        expect("Port 0:" not in p.output(), "the VF is listed to the application", p)
    status = p.stop()
    expect(status == 0, f"testpmd exited {status}", p)


def test_azure_line_netvsc_port_with_our_vf():
    azure_line()


def test_azure_line_vf_announced_at_packet_filter():
    """The host announces the VF only once the guest set a packet filter (its port started):
    net_netvsc then attaches our port while starting, after testpmd took it as a port of its own."""
    azure_line(["--hw", "netvsc-vfassoc=packet-filter"], vf_at_probe=False)


def test_rss_table_through_netvsc():
    """net_netvsc hands its own 128-entry RSS table to its VF's reta_update: testpmd's
    `port config 1 rss reta` on the netvsc port with two RX queues reaches our port with 128
    entries, which it takes (the NIC's table repeats with the queue count as period; doc/guide.md
    "Queues at run time"). Before, our driver refused any size but 64 and testpmd printed
    "Bad redirection table parameter, return code = -22"."""
    p = Program([*emu_run(["--uio-netvsc", "0"]), "--", "dpdk-testpmd", "-l", "0-1",
                 "--file-prefix", "mana-netvsc-reta", "--huge-unlink", *harness.pmd_args(),
                 "--vdev", f"{EMU_BDF},mac={MAC}", "--", "-i", "--rxq=2", "--txq=2",
                 "--txd=128", "--rxd=128"], stdin=subprocess.PIPE)
    p.wait_for(r"hn_vf_attach\(\): found matching VF port 0")
    p.wait_for(rf"Port {NETVSC_PORT}: {MAC.upper()}")
    repeat_until(lambda: netvsc_counters(p), lambda c: c["data_path_vf"] == 1,
                 "the data path on the VF", timeout=30)
    mark = len(p.lines)
    p.send(f"port config {NETVSC_PORT} rss reta (0,1),(1,0)")
    p.send(f"show port {NETVSC_PORT} rss reta 128 (0x3,0x0)")
    p.wait_for(r"RSS RETA configuration: hash index=1, queue=0", start=mark)
    expect(not any("Bad redirection table" in line or ("net_mana" in line and "RSS table" in line)
                   for line in p.lines[mark:]), "the RSS table was refused", p)
    p.send("quit")
    status = p.finish()
    expect(status == 0, f"testpmd exited {status}", p)


def l3fwd(rx_queues=1, hw=()):
    """DPDK's l3fwd on the netvsc port (l2fwd refuses a port id above the number of ports the
    application sees, and the VF owned by netvsc is port 0). The frames' destination misses
    l3fwd's route table, so it sends them back out of the netvsc port with its MAC as source."""
    out = subprocess.run([str(TOP / "scripts" / "build-dpdk-example.sh"), "l3fwd"],
                         capture_output=True, text=True)
    expect(out.returncode == 0, f"cannot build l3fwd: {out.stderr}")
    app = out.stdout.strip().splitlines()[-1]
    p = Program([*emu_run(["--uio-netvsc", "0", "--wire", f"tap:{TAP}", *hw]), "--", app, "-l", "0",
                 "--file-prefix", "mana-netvsc", "--huge-unlink", *harness.pmd_args(), "--",
                 "-p", f"{1 << NETVSC_PORT:#x}", "--parse-ptype",
                 "--config=" + ",".join(f"({NETVSC_PORT},{q},0)" for q in range(rx_queues))])
    p.wait_for(r"Port %d Link up" % NETVSC_PORT, timeout=60)
    bring_up(TAP)
    return p


def frames(tag, count, dst=MAC):
    return [Ether(src="02:00:00:00:00:05", dst=dst) / IP(src="192.0.2.1", dst="192.0.2.2")
            / UDP(sport=5000 + i, dport=9) / Raw(b"%s-%03d" % (tag, i)) for i in range(count)]


def bounce(tag, count, dst=MAC):
    """Sends `count` frames to the TAP and waits for l3fwd to send each back (its MAC as source)."""
    capture = Capture(TAP, lambda f: f.haslayer(Raw) and bytes(f[Raw]).startswith(tag)
                      and f[Ether].src.lower() == MAC)
    sendp(frames(tag, count, dst), iface=TAP)
    capture.wait_for(count)
    got = capture.stop()
    expect(len(got) == count, f"{tag}: {len(got)} frames came back, sent {count}")


def test_l3fwd_unicast_on_vf_broadcast_on_synthetic():
    p = l3fwd()
    before_vf, before_nic = device_port(p), netvsc_counters(p)
    bounce(b"uni", 40)
    bounce(b"bcast", 5, dst="ff:ff:ff:ff:ff:ff")
    vf, nic = device_port(p), netvsc_counters(p)
    # Unicast in through our VF; everything out through it.
    expect(vf["rx_frames"] - before_vf["rx_frames"] == 40, f"VF RX: {before_vf} -> {vf}")
    expect(vf["tx_frames"] - before_vf["tx_frames"] == 45, f"VF TX: {before_vf} -> {vf}")
    # Broadcast in through the synthetic path, nothing out of it.
    expect(nic["rx_packets"] - before_nic["rx_packets"] == 5, f"synthetic RX: {before_nic} -> {nic}")
    expect(nic["tx_packets"] == 0, f"synthetic TX: {nic}")
    status = p.stop()
    expect(status == 0, f"l3fwd exited {status}", p)


def test_l3fwd_group_frames_on_vf():
    """--hw netvsc-group-frames=vf: with the data path on the VF, broadcast goes there too."""
    p = l3fwd(hw=["--hw", "netvsc-group-frames=vf"])
    before_vf = device_port(p)
    bounce(b"uni", 10)
    bounce(b"bcast", 5, dst="ff:ff:ff:ff:ff:ff")
    vf, nic = device_port(p), netvsc_counters(p)
    expect(vf["rx_frames"] - before_vf["rx_frames"] == 15, f"VF RX: {before_vf} -> {vf}")
    expect(nic["rx_packets"] == 0, f"synthetic RX: {nic}")
    status = p.stop()
    expect(status == 0, f"l3fwd exited {status}", p)


def test_l3fwd_four_rx_queues_over_subchannels():
    """Four RX queues: net_netvsc asks the host for three subchannels (their ring files appear in
    the uio view) and spreads its queues over them; our VF gets four RX queues."""
    p = l3fwd(rx_queues=4)
    nic = netvsc_counters(p)
    expect(nic["channels"] == 4, f"primary + 3 subchannels: {nic}")
    before_vf = device_port(p)
    bounce(b"mq-uni", 64)
    bounce(b"mq-bcast", 32, dst="ff:ff:ff:ff:ff:ff")
    vf, nic = device_port(p), netvsc_counters(p)
    expect(vf["rx_frames"] - before_vf["rx_frames"] == 64, f"VF RX: {before_vf} -> {vf}")
    expect(nic["rx_packets"] == 32, f"synthetic RX over the four channels: {nic}")
    status = p.stop()
    expect(status == 0, f"l3fwd exited {status}", p)


def test_vf_removed_and_readded_while_forwarding():
    """Five servicing cycles, as LISA's hot-plug test runs them."""
    p = l3fwd()
    bounce(b"before", 20)
    # The verbs objects of our port as net_netvsc first set it up: each re-add must come back to
    # exactly these (a leak of the closed port's objects would add to them).
    baseline = json.loads(emu_ctl(p, "live", "0")[3:])
    for cycle in range(5):
        mark = len(p.lines)
        expect(emu_ctl(p, "remove", "0") == "ok VF 0 removed", "remove")
        # net_netvsc sees our removal event and lets the VF go; the host switches the data path
        # back.
        repeat_until(lambda: netvsc_counters(p), lambda c: c["data_path_vf"] == 0,
                     "the data path back on the synthetic NIC", timeout=30)
        tx_before = netvsc_counters(p)["tx_packets"]
        bounce(b"synthetic%d" % cycle, 30)
        nic = netvsc_counters(p)
        expect(nic["tx_packets"] - tx_before == 30, f"cycle {cycle}: synthetic TX of 30: {nic}")
        expect(emu_ctl(p, "add", "0") == "ok VF 0 added", "add")
        p.wait_for(HOTPLUG_LINE + re.escape(EMU_BDF), timeout=30, start=mark)
        repeat_until(lambda: netvsc_counters(p), lambda c: c["data_path_vf"] == 1,
                     "the data path on the VF again", timeout=30)
        before_vf = device_port(p)
        bounce(b"after%d" % cycle, 20)
        vf = device_port(p)
        expect(vf["rx_frames"] - before_vf["rx_frames"] == 20, f"cycle {cycle}: VF RX: {vf}")
        live = json.loads(emu_ctl(p, "live", "0")[3:])
        expect(live == baseline, f"cycle {cycle}: verbs objects {live}, first set up {baseline}")
    status = p.stop()
    expect(status == 0, f"l3fwd exited {status}", p)


# The VM's cap in the test below: low enough that the synthetic path, uncapped, would send the
# whole burst at once on any machine.
CAP_PPS = 100
CAP_BURST = 300


def test_vm_cap_holds_on_the_synthetic_path():
    """`--tx-pps` is the VM's cap on every path (doc/hardware.md §9.20): with the VF removed,
    l3fwd's frames leave through the synthetic NIC at most CAP_PPS a second. A burst of CAP_BURST
    frames goes out over seconds, never more than CAP_PPS per elapsed second plus one ring
    packet's worth (net_netvsc aggregates up to 8 frames into one)."""
    p = l3fwd(hw=["--tx-pps", str(CAP_PPS)])
    bounce(b"capped-vf", 10)
    expect(emu_ctl(p, "remove", "0") == "ok VF 0 removed", "remove")
    repeat_until(lambda: netvsc_counters(p), lambda c: c["data_path_vf"] == 0,
                 "the data path back on the synthetic NIC", timeout=30)
    start = netvsc_counters(p)["tx_packets"]
    began = time.monotonic()
    sendp(frames(b"capped", CAP_BURST), iface=TAP)

    def sent_within_cap():
        sent = netvsc_counters(p)["tx_packets"] - start
        elapsed = time.monotonic() - began  # read after the counter: an upper bound
        expect(sent <= CAP_PPS * elapsed + 9,
               f"{sent} frames out of the synthetic NIC in {elapsed:.2f} s, cap {CAP_PPS}/s", p)
        return sent

    sent = repeat_until(lambda: (time.sleep(0.2), sent_within_cap())[1], lambda n: n >= CAP_PPS,
                        f"{CAP_PPS} frames out of the synthetic NIC", timeout=30)
    expect(sent < CAP_BURST, f"the whole burst of {CAP_BURST} went out at once: {sent}", p)
    status = p.stop()
    expect(status == 0, f"l3fwd exited {status}", p)


if __name__ == "__main__":
    tests = [test_azure_line_netvsc_port_with_our_vf, test_azure_line_vf_announced_at_packet_filter,
             test_rss_table_through_netvsc, test_l3fwd_unicast_on_vf_broadcast_on_synthetic,
             test_l3fwd_group_frames_on_vf, test_l3fwd_four_rx_queues_over_subchannels,
             test_vf_removed_and_readded_while_forwarding, test_vm_cap_holds_on_the_synthetic_path]
    if harness.NETVSC_HOT_ADD_DEADLOCKS:
        tests = harness.not_on_this_dpdk(tests, {"test_vf_removed_and_readded_while_forwarding"},
                                         "its net_netvsc deadlocks at a VF hot-add (harness.py)")
    harness.main(tests)
