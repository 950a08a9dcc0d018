#!/usr/bin/env python3
"""Port configuration a user gets wrong is refused at once with one line that says what to change:
RX buffers too small for the largest frame (no scattered RX), MTUs beyond the standard range; a
standard MTU is taken (doc/guide.md, "RX buffers and MTU")."""

import harness
from harness import EMU_BDF, emu_mac, expect, testpmd_on_emu
from test_lifecycle import command

PROMPT = r"testpmd> ?$"


def test_rx_buffer_smaller_than_a_frame_is_refused_with_the_size():
    # 1200-byte data room: 1072 bytes after the headroom, less than a 1518-byte frame.
    p = testpmd_on_emu(["--ports", "1"], "mana-txclog-mbuf",
                       ["-i", "--mbuf-size=1200", "--rxq=1", "--txq=1"], interactive=True)
    p.wait_for(r"RX queue 0: mempool \S+ has 1200 bytes of data room, frames need 1646 .*"
               r"--mbuf-size=1646")
    p.send("quit")
    p.finish()


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
    mark = len(p.lines)
    p.send("port config mtu 0 9000")
    p.wait_for(r"(?i)mtu.*(9000|failed)", start=mark)
    command(p, "show port info 0", done=r"^MTU: \d+")
    expect("MTU: 1500" in "\n".join(p.lines[mark:]), "a refused MTU changed the port's MTU", p)
    p.send("quit")
    expect(p.finish() == 0, "testpmd failed", p)


if __name__ == "__main__":
    harness.main([test_rx_buffer_smaller_than_a_frame_is_refused_with_the_size,
                  test_mtu_within_the_standard_range_is_taken])
