# SPDX-License-Identifier: BSD-3-Clause
"""What the emulator under a test reports (mana-emu ctl, mana-emu fabric, its sysfs files): the
verbs objects alive, the device's counters per port and per SQ, the synthetic NIC's counters, the
fabric's ports. Each reply is checked to be an `ok` one before it is read."""

import glob
import json
import os
import subprocess
import time

from harness import (EMU_BDF, MANA_EMU, Failure, child_environ, emu_ctl, emu_ctl_begin, expect,
                     repeat_until)

# `live` of an emulator after every verbs object of a port was destroyed.
NO_OBJECTS = {"pds": 0, "mrs": 0, "cqs": 0, "wqs": 0, "sqs": 0, "rss_qps": 0, "contexts": 0}


def ok_json(p, *command):
    """The JSON of an `ok {...}` reply of mana-emu ctl to `command`; another reply fails."""
    reply = emu_ctl(p, *command)
    if not reply.startswith("ok "):
        raise Failure(f"mana-emu ctl {' '.join(command)}: {reply}")
    return json.loads(reply[3:])


def live(p, vf=0):
    """The verbs objects alive in the emulator's VF `vf` (mana-emu ctl live): kind -> count."""
    return ok_json(p, "live", str(vf))


def device_counters(p, vf=0):
    """The emulator's counters of VF `vf` under `p` (mana-emu ctl counters): ports, SQs, RQs."""
    return ok_json(p, "counters", str(vf))


def device_port(p, port=0, vf=0):
    """The device's counters of one vPort (frames sent, received, dropped, its MTU ...)."""
    return device_counters(p, vf)["ports"][port]


def sq_counters(p, name):
    """One counter of every live SQ (hardware id -> value) from the emulator."""
    return {q["id"]: q[name] for q in device_counters(p)["sqs"]}


def sq_packets(p):
    """Packets completed by every live SQ (hardware id -> count)."""
    return sq_counters(p, "packets")


def netvsc_counters(p):
    """The counters of the emulated synthetic NIC 0 (mana-emu --uio-netvsc): its data path, its
    own frames."""
    return ok_json(p, "netvsc-counters", "0", "0")


def removal_begun(p):
    """`mana-emu ctl remove 0` under `--hw fatal-event-delay-ms`: returns once the VF is gone (its
    PCI folder, which goes after its contexts were disassociated) and its removal event is still
    to come; the returned process's `communicate` gives the reply, which comes with the event."""
    removal = emu_ctl_begin(p, "remove", "0")
    function = os.path.join(child_environ(p, "SYSFS_PCI_DEVICES"), EMU_BDF)
    repeat_until(lambda: (time.sleep(0.01), os.path.exists(function))[1], lambda there: not there,
                 f"{function} gone at the removal", timeout=30)
    return removal


def removal_answered(p, removal):
    """The reply to removal_begun's `remove`: `ok VF 0 removed` (bounded)."""
    reply = removal.communicate(timeout=30)[0].strip()
    expect(reply == "ok VF 0 removed", f"remove: {reply}", p)


def netdev_mtu(p):
    """The MTU in the emulated VF's netdev sysfs file."""
    files = glob.glob(f"{child_environ(p, 'SYSFS_PCI_DEVICES')}/{EMU_BDF}/net/*/mtu")
    expect(len(files) == 1, f"netdev mtu files: {files}", p)
    with open(files[0]) as f:
        return int(f.read())


def fabric_ports(name):
    """`mana-emu fabric <name>`: {mac: counters} of every port the fabric has seen."""
    out = subprocess.run([MANA_EMU, "fabric", name], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise Failure(f"mana-emu fabric {name}: {out.stdout}{out.stderr}")
    ports = [json.loads(line) for line in out.stdout.splitlines()]
    return {p["mac"]: p for p in ports}
