#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Port configuration a user gets wrong is refused at once with one line that says what to change:
RX buffers too small for the largest frame (no scattered RX), MTUs beyond the standard range,
devargs however long; a standard MTU is taken; a second -a for the same device, which DPDK ignores,
is named in a warning (doc/guide.md)."""

import re

import harness
from harness import EMU_BDF, emu_mac, expect, testpmd_on_emu
from testpmd_cli import command

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool, measured 370 MB.
HUGEPAGES_MB = 512

PROMPT = r"testpmd> ?$"


def test_rx_buffer_smaller_than_a_frame_is_refused_with_the_size():
    # 1200-byte data room: 1072 bytes after the headroom, less than a 1514-byte frame (MTU 1500).
    p = testpmd_on_emu(["--ports", "1"], "mana-txclog-mbuf",
                       ["-i", "--mbuf-size=1200", "--rxq=1", "--txq=1"], interactive=True)
    p.wait_for(r"RX queue 0: mempool \S+ has 1200 bytes of data room, frames need 1642 .*"
               r"--mbuf-size=1642")
    p.send("quit")
    status = p.finish()
    expect(status == 0, f"testpmd exited {status} after quit", p)


def test_mtu_within_the_standard_range_is_taken():
    p = testpmd_on_emu(["--ports", "1"], "mana-txclog-mtu", ["-i", "--rxq=1", "--txq=1"],
                       interactive=True)
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    for mtu in (1500, 1280, 68, 1500):
        mark = len(p.lines)
        p.send(f"port config mtu 0 {mtu}")
        command(p, "show port info 0", done=r"^MTU: \d+")
        text = "\n".join(p.lines[mark:])
        expect("Set MTU failed" not in text and f"MTU: {mtu}" in text,
               f"port config mtu 0 {mtu} was not taken:\n{text}", p)
    # 9000 is within the netdev's max MTU but the default 2176-byte mbufs cannot hold its frames.
    mark = len(p.lines)
    p.send("port config mtu 0 9000")
    p.wait_for(r"MTU 9000 needs a mempool data room of 9142 bytes .*RX queue 0's has 2176"
               r".*--mbuf-size=9142", start=mark)
    command(p, "show port info 0", done=r"^MTU: \d+")
    expect("MTU: 1500" in "\n".join(p.lines[mark:]), "a refused MTU changed the port's MTU", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


def test_long_devargs_keep_their_hint():
    """Through the real EAL: devargs of 300 and 400 characters still end in what is expected."""
    nine = ",".join(f"mac=02:00:00:00:00:{i:02x}" for i in range(9))
    for args, hint in ((f"mac={'z' * 300}", r"\(300 characters\) in mac= devargs: expected xx:xx"),
                       (f"{nine},{'x' * 200}", r"characters\): the keys are mac=<mac_addr>, recovery_timeout=<seconds>, tx_stall_timeout=<seconds>")):
        p = testpmd_on_emu(["--ports", "1"], "mana-longargs", ["--stats-period", "1"],
                           eal_extra=["-a", f"{EMU_BDF},{args}"])
        p.wait_for(hint)
        status = p.stop()
        expect(status == 0, f"testpmd without a port exited {status} on SIGINT", p)


def test_second_allow_entry_for_a_device_is_named():
    """testpmd -a <bdf>,mac=A -a <bdf>,mac=B: DPDK probes with the first only; the warning names
    the second's mac= and the single -a that works, and the first still applies."""
    first, second = emu_mac(0), emu_mac(1)
    p = testpmd_on_emu(["--ports", "2"], "mana-txclog-dup", ["--stats-period", "1"],
                       eal_extra=["-a", f"{EMU_BDF},mac={first}", "-a", f"{EMU_BDF},mac={second}"])
    p.wait_for(r"second -a for this device is ignored.*" + re.escape(f"'mac={second}'") +
               r".*-a " + re.escape(EMU_BDF) + r",mac=<mac1>,mac=<mac2>")
    p.wait_for(rf"Port 0: {first.upper()}")
    expect(p.stop() == 0, "testpmd failed", p)
    expect(second.upper() not in p.output(), "the ignored -a's port was probed", p)


if __name__ == "__main__":
    harness.main([test_rx_buffer_smaller_than_a_frame_is_refused_with_the_size,
                  test_mtu_within_the_standard_range_is_taken, test_long_devargs_keep_their_hint,
                  test_second_allow_entry_for_a_device_is_named])
