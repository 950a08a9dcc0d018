"""The Linux side of a TAP wire: the interface the emulator creates, driven with scapy, and a
reference Toeplitz hash written independently of the emulator's."""

import subprocess
import time

from harness import Failure, wait_for_interface

# MANA's default RSS key (spec §2.5), used when the application gives none.
MANA_DEFAULT_RSS_KEY = bytes.fromhex(
    "2cc681d15bdbf4f7fca28319db1a3e946b9e38d92c9c03d1ad9944a7d9563d59063c25f3fc1fdc2a")


def toeplitz(key, data):
    """Reference 32-bit Toeplitz hash (bitwise, straight from the definition)."""
    key_bits = int.from_bytes(key, "big")
    key_len = len(key) * 8
    result = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            result ^= (key_bits >> (key_len - 32 - i)) & 0xFFFFFFFF
    return result


def bring_up(ifname, netns=None):
    """Waits for the emulator's TAP interface, quiets the kernel's own traffic on it, brings it up."""
    wait_for_interface(ifname)
    if netns:
        subprocess.run(["ip", "netns", "add", netns], check=False, capture_output=True)
        subprocess.run(["ip", "link", "set", ifname, "netns", netns], check=True)
    prefix = ["ip", "netns", "exec", netns] if netns else []
    subprocess.run(prefix + ["sysctl", "-qw", f"net.ipv6.conf.{ifname}.disable_ipv6=1"], check=False)
    subprocess.run(prefix + ["ip", "link", "set", ifname, "up"], check=True)


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


class Capture:
    """Frames seen on an interface, collected as they arrive (scapy's AsyncSniffer keeps its own
    list only once stopped)."""

    def __init__(self, iface, keep):
        from scapy.all import AsyncSniffer
        self.frames = []
        self._sniffer = AsyncSniffer(iface=iface, lfilter=keep, prn=self.frames.append, store=False)
        self._sniffer.start()
        wait_until(lambda: getattr(self._sniffer, "running", False), 10, f"capture on {iface}")

    def wait_for(self, count, timeout=30):
        wait_until(lambda: len(self.frames) >= count, timeout, f"{count} frames (have {len(self.frames)})")

    def stop(self):
        if self._sniffer.running:
            self._sniffer.stop()
        return self.frames
