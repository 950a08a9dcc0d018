# SPDX-License-Identifier: BSD-3-Clause
"""How the tests lay out their DPDK processes: the lcore maps of a primary and its secondaries, the
two NICs of a fabric wire, the one-port testpmd sending to itself over a loop wire, and the
one-port testpmd on a TAP wire."""

from harness import emu_mac, testpmd_on_emu
from tap_peer import bring_up

# Processes of one DPDK instance need distinct lcore ids: each lcore id has one mempool cache,
# shared by every process, and two lcores using it at once corrupt it (header-processing error
# completions and decaying rates were seen with `-l 0-1` in both; source-MAC drops and rates down
# by 75 % in the recovery tests). dpdk-proc-info runs on lcore 0.
PRIMARY_LCORES = "2@0,3@1"
SECONDARY_LCORES = "4@1,5@0"  # the forwarding lcores (3 and 5) on different CPUs
# Both forwarding lcores (3 and 5) on CPU 1, CPU 0 left to the emulator's device thread
# (mana-emu run --device-cpu 0): the rate measurements of test_recovery.py.
SECONDARY_LCORES_BESIDE_PRIMARY = "4@0,5@1"

# The two NICs of LISA's two-VM lines, each emulated by its own `mana-emu run` on one fabric wire.
SENDER = {"pci": "7870:00:00.0", "mac": "00:0d:3a:00:0a:01", "ip": "198.18.0.1"}
RECEIVER = {"pci": "7870:00:01.0", "mac": "00:0d:3a:00:0b:01", "ip": "198.18.0.2"}


def looped_txonly(prefix, eal_extra=None, secondaries=False, opts=()):
    """One port on a loop wire sending to itself in txonly mode: nothing polls its RX queue, so
    once its RX WQEs are used every frame is a no-WQE drop."""
    p = testpmd_on_emu(["--ports", "1"], prefix,
                       ["-i", "--forward-mode=txonly", f"--eth-peer=0,{emu_mac(0)}", *opts],
                       eal_extra=eal_extra, interactive=True, secondaries=secondaries,
                       lcores="2@0,3@1")
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    return p

# testpmd's peers on a pair wire: each port's frames go to the other port's MAC (mac, flowgen,
# txonly; the vPort delivers frames for its own MAC, broadcast and multicast only).
PAIR_PEERS = [f"--eth-peer=0,{emu_mac(1)}", f"--eth-peer=1,{emu_mac(0)}"]


def tap_testpmd(tap, prefix, testpmd_opts, netns=None):
    """Interactive testpmd on one port whose wire is the TAP interface `tap` (in network namespace
    `netns` if given), once the port is up and the interface is ready for scapy."""
    p = testpmd_on_emu(["--ports", "1", "--wire", f"tap:{tap}"], prefix,
                       ["-i", "--nb-cores=1", *testpmd_opts], interactive=True)
    p.wait_for(rf"Port 0: {emu_mac(0).upper()}")
    bring_up(tap, netns)
    return p
