#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""RX interrupts through a real DPDK application: DPDK's l3fwd-power example (Debian's dpdk-doc
sources) in --interrupt-only mode sleeps on net_mana's RX interrupt (a completion channel armed
through the CQ doorbell) and must wake up for frames arriving on the TAP wire, several times.
The frames use benchmark addresses (198.18.0.0/15) that miss l3fwd-power's fixed route table, so it
sends them back out of the port they came in on, where the test sees them."""

import subprocess

import harness
from harness import EMU_BDF, PROFILE, Program, Skip, TOP, emu_hw, emu_mac, emu_run, expect
from tap_peer import Capture, bring_up

from scapy.all import IP, UDP, Ether, Raw, conf, sendp  # noqa: E402

# Hugepages its DPDK processes take together at their peak (hugepages.py): l3fwd-power's pools, measured 90 MB.
HUGEPAGES_MB = 256

conf.verb = 0
TAP = "mxpow0"


def test_l3fwd_power_wakes_up_on_rx_interrupts():
    emu_opts = ["--ports", "1", "--wire", f"tap:{TAP}"]
    if emu_hw(emu_opts)["cq-eq"] == "off":
        # Without an EQ the device never signals (unit test CqEq.OffArmedCqsNeverSignal); that no
        # wake-up comes could only be shown by waiting, so the test does not apply.
        raise Skip(f"profile {PROFILE}: cq-eq=off, CQs have no EQ and RX interrupts never fire")
    out = subprocess.run([str(TOP / "scripts" / "build-dpdk-example.sh"), "l3fwd-power"],
                         capture_output=True, text=True)
    expect(out.returncode == 0, f"cannot build l3fwd-power: {out.stderr}")
    app = out.stdout.strip().splitlines()[-1]
    p = Program([*emu_run(emu_opts), "--", app, "-l", "0",
                 "--file-prefix", "mana-power", "--huge-unlink", "-d", harness.PMD,
                 "-a", EMU_BDF, "--", "-p", "0x1", "--config=(0,0,0)", "--interrupt-only",
                 "--parse-ptype"])
    p.wait_for(r"entering main interrupt loop on lcore 0")
    bring_up(TAP)
    for round_ in range(3):
        mark = len(p.lines)
        capture = Capture(TAP, lambda f, r=round_: f.haslayer(Raw) and bytes(f[Raw]).startswith(b"wake%d" % r)
                          and f[Ether].src.lower() == emu_mac(0))
        frames = [Ether(src="02:00:00:00:00:05", dst=emu_mac(0)) / IP(src="198.18.0.1", dst="198.19.0.1")
                  / UDP(sport=5000 + i, dport=9) / Raw(b"wake%d-%02d" % (round_, i)) for i in range(8)]
        sendp(frames, iface=TAP)
        p.wait_for(r"lcore 0 is waked up from rx interrupt on port 0 queue 0", start=mark)
        capture.wait_for(len(frames))
        capture.stop()
        # Back to sleep on the interrupt before the next round's frames.
        p.wait_for(r"lcore 0 sleeps until interrupt triggers", start=p.last_index)
    status = p.stop()
    expect(status == 0, f"l3fwd-power exited {status} on SIGINT", p)


if __name__ == "__main__":
    harness.main([test_l3fwd_power_wakes_up_on_rx_interrupts])
