# SPDX-License-Identifier: BSD-3-Clause
"""The Linux side of a TAP wire: the interface the emulator creates, driven with scapy, and a
reference Toeplitz hash written independently of the emulator's."""

import select
import socket
import struct
import subprocess
import time

import harness
from harness import Failure, wait_for_interface

# MANA's default RSS key (doc/hardware.md §2.5), used when the application gives none.
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
    # scapy keeps the interface list it read first: a TAP made anew by the next test has another
    # index under the same name (scapy 2.6 then sends to the old one: ENODEV).
    from scapy.all import conf
    conf.ifaces.reload()


def wait_until(predicate, timeout, what):
    timeout *= harness.TIME_SCALE
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


class Capture:
    """Frames arriving on an interface (not the ones this host sends), from a raw AF_PACKET socket
    that is open before the caller sends anything."""

    PACKET_OUTGOING = 4
    SOL_PACKET, PACKET_AUXDATA, TP_STATUS_VLAN_VALID = 263, 8, 0x10
    AUXDATA = struct.Struct("IIIHHHH")  # struct tpacket_auxdata

    def __init__(self, iface, keep):
        self.keep = keep
        self.frames = []
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        # The kernel takes a received VLAN tag out of the frame and reports it as auxdata.
        self.sock.setsockopt(self.SOL_PACKET, self.PACKET_AUXDATA, 1)
        self.sock.bind((iface, 0))
        self.sock.setblocking(False)

    def _drain(self):
        from scapy.all import Ether
        while True:
            try:
                data, ancillary, _flags, addr = self.sock.recvmsg(65535, socket.CMSG_SPACE(64))
            except BlockingIOError:
                return
            if addr[2] == self.PACKET_OUTGOING:
                continue
            for level, kind, value in ancillary:
                if level == self.SOL_PACKET and kind == self.PACKET_AUXDATA:
                    aux = self.AUXDATA.unpack_from(value)
                    if aux[0] & self.TP_STATUS_VLAN_VALID:
                        tpid = aux[6] or 0x8100
                        data = data[:12] + struct.pack("!HH", tpid, aux[5]) + data[12:]
            frame = Ether(data)
            if self.keep(frame):
                self.frames.append(frame)

    def wait_for(self, count, timeout=30):
        def enough():
            select.select([self.sock], [], [], 0.05)
            self._drain()
            return len(self.frames) >= count
        wait_until(enough, timeout, f"{count} frames (have {len(self.frames)})")

    def stop(self):
        self._drain()
        self.sock.close()
        return self.frames
