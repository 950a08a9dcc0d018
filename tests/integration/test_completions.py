#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Completions that must not stop or shift a queue.

TX keeps completing when tx_rs_thresh asks for CQEs rarely and WQEs are large (doc/hardware.md
§4.9, doc/guide.md "TX thresholds"). The testpmd line that once stalled TX: 64 descriptors, tx_rs_thresh 60,
packets of 15 segments with VLAN insertion (long OOB): each WQE takes 9 basic units of an SQ sized
for 8 per descriptor, so the SQ fills at 56 WQEs, before 60 packets went without a CQE. Unless
the driver asks for a CQE when the SQ has no room for another such WQE, every outstanding WQE is
suppressed, nothing completes, and TX stops after 56 packets for good.

RX object-fence CQEs consume no RQ WQE (doc/hardware.md §4.7, the kernel's mana_process_rx_cqe):
the emulator writes them on request (mana-emu ctl fault ... rx error-cqe 3), and the port counts
them without dropping a packet for each, so its ring stays in step."""

import harness
from harness import emu_ctl, emu_mac, expect, testpmd_on_emu
from testpmd_cli import show_port_stats, xstats

# One testpmd at a time with testpmd's default mbuf pool (about 370 MB): hugepages.py.
HUGEPAGES_MB = 512

PERIODS = 5  # consecutive stats periods (1 s each) in which TX must keep sending
MIN_PER_PERIOD = 1000  # packets per second: the stalled queue sends 0, a working one ~10^5


def tx_packets_of_next_block(p):
    """TX-packets and TX-errors of port 0 in the next periodic stats block."""
    p.wait_for(r"NIC statistics for port 0", timeout=60, start=len(p.lines))
    m = p.wait_for(r"TX-packets:\s+(\d+)\s+TX-errors:\s+(\d+)", start=p.last_index)
    return int(m.group(1)), int(m.group(2))


def test_fifteen_segment_vlan_packets_with_txrs_60_keep_sending():
    segs = ",".join(["64"] * 15)
    p = testpmd_on_emu(["--ports", "1", "--wire", "null"], "mana-txrs",
                       ["--forward-mode=txonly", "-a", "--stats-period", "1", "--txd=64",
                        "--txrs=60", f"--txpkts={segs}", "--tx-offloads=0x00008001",
                        "--rxq=1", "--txq=1"])
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    last, _ = tx_packets_of_next_block(p)
    growth = []
    for period in range(PERIODS):
        tx, errors = tx_packets_of_next_block(p)
        growth.append(tx - last)
        expect(tx - last >= MIN_PER_PERIOD,
               f"stats period {period + 1}: TX-packets {last} -> {tx} (+{tx - last}, at least "
               f"{MIN_PER_PERIOD} expected; per period so far: {growth}): TX stalled", p)
        expect(errors == 0, f"TX-errors {errors} after period {period + 1}", p)
        last = tx
    print(f"TX-packets per 1 s period: {growth}")
    rc = p.stop()
    expect(rc == 0, f"testpmd exited {rc}", p)


FENCES = 5


def rx_packets(p):
    return show_port_stats(p, last_port=1)[0]["RX-packets"]


def test_rx_fence_cqes_consume_no_buffer():
    p = testpmd_on_emu(["--ports", "2", "--wire", "pair"], "mana-fence",
                       ["-i", "--forward-mode=io", "--eth-peer=0,ff:ff:ff:ff:ff:ff",
                        "--eth-peer=1,ff:ff:ff:ff:ff:ff"], interactive=True)
    p.wait_for(rf"Port 1: {emu_mac(1).upper()}")
    p.send("start tx_first")
    harness.repeat_until(lambda: rx_packets(p), lambda n: n >= 1000,
                         "port 0 to receive 1000 packets", timeout=60)
    reply = emu_ctl(p, "fault", "0", "0", "rx", "error-cqe", "3", str(FENCES))
    expect(reply == "ok fault armed", f"fault not armed: {reply}", p)
    harness.repeat_until(lambda: xstats(p).get("rx_cqe_object_fence_errors"),
                         lambda n: n == FENCES,
                         f"xstat rx_cqe_object_fence_errors to reach {FENCES}", timeout=60)
    before = rx_packets(p)
    harness.repeat_until(lambda: rx_packets(p), lambda n: n >= before + 1000,
                         "port 0 to receive 1000 more packets after the fences", timeout=60)
    stats = show_port_stats(p, last_port=1)[0]
    expect(stats.get("RX-errors") == 0,
           f"RX-errors {stats.get('RX-errors')} after {FENCES} fence CQEs: each consumed a "
           f"receive buffer (the ring is shifted)", p)
    p.send("stop")
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_fifteen_segment_vlan_packets_with_txrs_60_keep_sending,
                  test_rx_fence_cqes_consume_no_buffer])
