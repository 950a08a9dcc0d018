#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Jumbo frames between two testpmd processes on Azure's fabric wire, with the line LISA's jumbo
test adds to its send/receive pair (test_fabric.py):
  --mbuf-size=9216 --max-pkt-len=9000 --txpkts=9000 --tx-offloads=0x00008000 (MULTI_SEGS)
testpmd turns --max-pkt-len into the MTU by subtracting max_rx_pktlen - max_mtu (14 here), so each
MTU M below is asked for as --max-pkt-len=M+14, and the sender's frames are M+14 bytes (the largest
the MTU allows), in several segments from 4000 up. Every frame the sender's driver took must reach
the receiver: exact counts, no error or drop anywhere. Then what must fail, fails clearly."""

import os
import re

from emulator import device_port, fabric_ports
import harness
from harness import Program, emu_run, expect
from launch import RECEIVER, SENDER
from testpmd_cli import FORWARDING_STARTED, ReceiverCounts, parse_forward_stats, parse_port_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): two testpmd processes of -m 128 and small pools, measured 360 and 412 MB.
HUGEPAGES_MB = 512

# 9 KiB mbufs: keep each process's pool small (LISA's VMs have GiBs of hugepages), and its memory
# (-m 128): two processes must fit in the 512 hugepages scripts/hugepages.sh reserves, with room.
POOL = ["--mbuf-size=9216", "--total-num-mbufs=4096"]
FRAMES = 3000  # the receiver counts at least this many before the sender stops


def testpmd(nic, fabric, prefix, args, emu_opts=()):
    eal = ["-l", "0-1", "--vdev", f"{nic['pci']},mac={nic['mac']}", "--file-prefix", prefix,
           "-m", "128", "--huge-unlink", *harness.pmd_args()]
    return Program([*emu_run(["--vf", nic["pci"], "--mac", nic["mac"], "--ip", nic["ip"],
                              "--wire", f"fabric:{fabric}", *emu_opts]),
                    "--", "dpdk-testpmd", *eal, "--", *args])


def segments(frame):
    """--txpkts for a frame of `frame` bytes: one segment up to 4000 bytes, else 4000-byte ones and
    the rest (multi-segment TX)."""
    if frame <= 4000:
        return str(frame)
    sizes = [4000] * ((frame - 1) // 4000)
    return ",".join(str(s) for s in [*sizes, frame - sum(sizes)])


def send_receive(max_pkt_len, txpkts, queues=1):
    fabric = f"jumbo-{os.getpid()}-{max_pkt_len}-{queues}"
    common = [*POOL, f"--max-pkt-len={max_pkt_len}", "--tx-offloads=0x00008000", "-a",
              "--stats-period", "1", "--nb-cores=1", f"--rxq={queues}", f"--txq={queues}",
              "--txd=256", "--rxd=256"]
    jumbo = ["--hw", "adapter-mtu=9000"]  # whatever the profile: Azure's jumbo-capable adapter
    rcv = testpmd(RECEIVER, fabric, "mana-jumbo-rcv", ["--forward-mode=rxonly", *common], jumbo)
    rcv.wait_for(FORWARDING_STARTED, timeout=60)  # after its RX drain: the sender may start
    flows = ["--txonly-multi-flow"] if queues > 1 else []
    snd = testpmd(SENDER, fabric, "mana-jumbo-snd",
                  ["--forward-mode=txonly", *common, f"--txpkts={txpkts}", *flows,
                   f"--tx-ip={SENDER['ip']},{RECEIVER['ip']}"], jumbo)
    snd.wait_for(r"txonly packet forwarding", timeout=60)
    counts = ReceiverCounts(rcv)
    counts.wait_for(FRAMES, timeout=60)
    expect(snd.stop() == 0, "sender failed", snd)
    sent = parse_forward_stats(snd.output())[0]["TX-packets"]
    # Every frame the sender's driver took reaches the receiver, or its count stops moving.
    counts.wait_for_all(sent, timeout=60)
    vport = device_port(rcv)
    ports = fabric_ports(fabric)
    expect(rcv.stop() == 0, "receiver failed", rcv)
    got = parse_forward_stats(rcv.output())
    received = sum(s["RX-packets"] for s in got.values())
    frame = sum(int(s) for s in txpkts.split(","))
    what = f"--max-pkt-len={max_pkt_len} --txpkts={txpkts} ({queues} queues)"
    s = ports[SENDER["mac"]]
    expect(received == sent and sent >= FRAMES,
           f"{what}: sender TX-packets {sent}, receiver RX-packets {received}; fabric {s}; "
           f"receiver's vPort {vport}; receiver's counts by stats block {counts.counts()}", rcv)
    expect(re.search(r"RX-errors:\s+[1-9]", rcv.output()) is None, f"{what}: receive errors", rcv)
    expect(all(vport[k] == 0 for k in ("rx_no_wqe_drops", "rx_mtu_drops", "rx_oversize")) and
           vport["rx_frames"] == sent, f"{what}: receiver's vPort {vport}", rcv)
    expect(s["delivered"] == sent and s["full_drops"] == 0, f"{what}: fabric {s}", rcv)
    rx_bytes = sum(st["RX-bytes"] for st in parse_port_stats(rcv.output()).values())
    expect(rx_bytes == sent * frame,
           f"{what}: {rx_bytes} RX bytes, expected {sent} frames of {frame} bytes", rcv)
    return sent


def test_jumbo_mtus_between_two_processes():
    for mtu in (1500, 4000, 8000, 9000):
        send_receive(mtu + 14, segments(mtu + 14))


def test_lisa_line_with_four_queues():
    # LISA's line as it is: --max-pkt-len=9000 is MTU 8986, whose largest frame is --txpkts=9000.
    send_receive(9000, "9000", queues=4)


def frames_above_the_receivers_mtu(vport_mtu):
    """A sender at MTU 9000 sends 4014-byte frames to a receiver at MTU 1500 (buffers of 9 KiB).
    Which MTU the vPort enforces is open (doc/hardware.md §9.11): under `vport-mtu=netdev` the
    receiver's vPort drops every frame (rx_mtu_drops), under `adapter` every frame is delivered
    whole. Either way nothing is lost unaccounted and the receiver reports no error."""
    fabric = f"jumbo-{os.getpid()}-{vport_mtu}"
    emu = ["--hw", "adapter-mtu=9000", "--hw", f"vport-mtu={vport_mtu}"]
    rcv = testpmd(RECEIVER, fabric, "mana-jumbo-rcv",
                  ["--forward-mode=rxonly", *POOL, "--max-pkt-len=1514", "-a", "--stats-period",
                   "1"],
                  emu)
    rcv.wait_for(FORWARDING_STARTED, timeout=60)  # after its RX drain: the sender may start
    snd = testpmd(SENDER, fabric, "mana-jumbo-snd",
                  ["--forward-mode=txonly", *POOL, "--max-pkt-len=9014", "--txpkts=4014", "-a",
                   "--stats-period", "1", f"--tx-ip={SENDER['ip']},{RECEIVER['ip']}"], emu)
    snd.wait_for(r"txonly packet forwarding", timeout=60)
    harness.repeat_until(lambda: device_port(snd)["tx_frames"], lambda n: n >= FRAMES,
                         f"the sender's vPort to send {FRAMES} frames", timeout=60)
    expect(snd.stop() == 0, "sender failed", snd)
    sent = parse_forward_stats(snd.output())[0]["TX-packets"]
    vport = harness.repeat_until(lambda: device_port(rcv),
                                 lambda v: v["rx_frames"] == sent,
                                 f"the receiver's vPort to account for {sent} frames", timeout=60)
    expect(rcv.stop() == 0, "receiver failed", rcv)
    received = sum(s["RX-packets"] for s in parse_forward_stats(rcv.output()).values())
    # Under `adapter` the receiver may also fall behind the sender: no-WQE drops, counted.
    dropped = vport["rx_mtu_drops"] + vport["rx_no_wqe_drops"]
    expected_mtu_drops = sent if vport_mtu == "netdev" else 0
    expect(received + dropped == sent and vport["rx_mtu_drops"] == expected_mtu_drops and
           (received > 0) == (vport_mtu == "adapter"),
           f"vport-mtu={vport_mtu}: {sent} sent, {received} received, vPort {vport}", rcv)
    expect(re.search(r"RX-errors:\s+[1-9]", rcv.output()) is None,
           f"vport-mtu={vport_mtu}: receive errors", rcv)


def test_frames_above_the_mtu_under_each_vport_mtu():
    for vport_mtu in ("netdev", "adapter"):
        frames_above_the_receivers_mtu(vport_mtu)


def test_mtu_above_the_adapter_mtu_is_refused_naming_the_limit():
    # An adapter without jumbo frames (kernels before 6.4): max MTU 1500.
    p = testpmd(RECEIVER, f"jumbo-neg-{os.getpid()}", "mana-jumbo-neg",
                ["--forward-mode=rxonly", *POOL, "--max-pkt-len=9000", "-a"],
                emu_opts=["--hw", "adapter-mtu=1500"])
    p.wait_for(r"MTU \(8986\) > device max MTU \(1500\)")
    status = p.finish()
    expect(status == 1, f"testpmd exited {status}, expected 1 (its port refused)", p)


def test_mbuf_too_small_for_the_mtu_is_refused_naming_the_size():
    p = testpmd(RECEIVER, f"jumbo-neg-{os.getpid()}", "mana-jumbo-neg",
                ["--forward-mode=rxonly", "--mbuf-size=2048", "--max-pkt-len=9014", "-a"],
                ["--hw", "adapter-mtu=9000"])
    p.wait_for(r"RX queue 0: mempool \S+ has 2048 bytes of data room, frames need 9142 "
               r"\(MTU 9000 \+ 14.*--mbuf-size=9142")
    status = p.finish()
    expect(status == 1, f"testpmd exited {status}, expected 1 (its RX queue refused)", p)


if __name__ == "__main__":
    harness.main([test_jumbo_mtus_between_two_processes, test_lisa_line_with_four_queues,
                  test_frames_above_the_mtu_under_each_vport_mtu,
                  test_mtu_above_the_adapter_mtu_is_refused_naming_the_limit,
                  test_mbuf_too_small_for_the_mtu_is_refused_naming_the_size])
