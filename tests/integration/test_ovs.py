#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Debian 12's Open vSwitch with DPDK (ovs-vswitchd-dpdk 3.1 on DPDK 22.11) bridging two MANA ports
of one emulated VF: frames sent into one port's TAP wire come out of the other's per the OpenFlow
rules the test installs, `ovs-vsctl get interface ... statistics` counts them (with our xstats), and
ovs-vswitchd logs no warning or error. Under both of the emulator's descriptor limits
(doc/emulator.md `--limits`); the 256-entry limit of 6.2-era kernels with OVS's default of 2048
descriptors fails as doc/guide.md "Open vSwitch" says."""

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from emulator import device_counters
import harness
from harness import emu_mac, emu_run, expect, pmd_args, repeat_until
from tap_peer import Capture, bring_up

from scapy.all import UDP, Ether, IP, Raw, conf, sendp  # noqa: E402

# Hugepages its DPDK processes take together at their peak (hugepages.py): Open vSwitch's DPDK memory, measured 256 MB.
HUGEPAGES_MB = 512

conf.verb = 0
VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"  # not the alternatives' default
SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
BRIDGE = "ovsmanabr"
TAPS = ("ovsmana0", "ovsmana1")  # the emulated ports' wires
IFACES = ("mana0", "mana1")  # OVS interface names; OpenFlow ports 1 and 2
MACS = (emu_mac(0), emu_mac(1))
PEER_MAC = "02:00:00:00:0f:01"  # the hosts behind the wires
# The emulator's limit profiles: a 6.2-era kernel under Debian 12's rdma-core (256 descriptors),
# and the 2025 kernel with rdma-core >= 49 (2048).
LIMITS_6_2 = ["--limits", "6.2"]
LIMITS_2025 = ["--limits", "2025", "--hw", "libmana-max-wr=0"]
SMALL_RINGS = {"n_rxq_desc": "256", "n_txq_desc": "256"}
VSCTL_TIMEOUT = 60  # s; ovs-vsctl waits (bounded) for ovs-vswitchd to apply each change


class Ovs:
    """ovsdb-server and ovs-vswitchd-dpdk (under mana-emu run) with their database, sockets and logs
    in a folder of their own, so they never meet a system-wide Open vSwitch."""

    def __init__(self, emu_opts):
        self.dir = Path(tempfile.mkdtemp(prefix="ovs-mana."))
        self.db = self.dir / "conf.db"
        self.sock = self.dir / "db.sock"
        self.log = self.dir / "ovs-vswitchd.log"
        self.env = {"OVS_RUNDIR": str(self.dir), "OVS_DBDIR": str(self.dir),
                    "OVS_LOGDIR": str(self.dir), "OVS_SYSCONFDIR": str(self.dir)}
        try:
            self._start(emu_opts)
        except BaseException:
            self.cleanup()  # its programs are stopped by harness.kill_leftovers
            raise

    def _start(self, emu_opts):
        subprocess.run(["ovsdb-tool", "create", self.db, SCHEMA], check=True)
        self.ovsdb = harness.Program(
            ["ovsdb-server", self.db, f"--remote=punix:{self.sock}", "--no-chdir",
             f"--unixctl={self.dir / 'ovsdb-server.ctl'}", "-vconsole:info"], env=self.env)
        self.ovsdb.wait_for(r"ovsdb-server \(Open vSwitch\)")
        self.vsctl("--no-wait", "init")
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".", "other_config:dpdk-init=true",
                   # OVS adds --in-memory: no files shared with other DPDK programs.
                   f"other_config:dpdk-extra={' '.join(pmd_args())} -a {harness.EMU_BDF}",
                   "other_config:dpdk-socket-mem=256", "other_config:dpdk-socket-limit=256",
                   "other_config:per-port-memory=true", "other_config:pmd-cpu-mask=0x2")
        argv = [*emu_run(emu_opts), "--", VSWITCHD, f"unix:{self.sock}", "--no-chdir",
                f"--unixctl={self.dir / 'ovs-vswitchd.ctl'}", f"--log-file={self.log}",
                "-vconsole:info", "-vfile:info"]
        self.vswitchd = harness.Program(argv, env=self.env)
        self.vswitchd.wait_for(r"DPDK Enabled - initialized", timeout=60)
        self.vsctl("add-br", BRIDGE, "--", "set", "bridge", BRIDGE, "datapath_type=netdev")

    def vsctl(self, *args):
        out = subprocess.run(["ovs-vsctl", f"--db=unix:{self.sock}", f"--timeout={VSCTL_TIMEOUT}",
                              *args], capture_output=True, text=True, env=self.env,
                             timeout=VSCTL_TIMEOUT + 10)
        expect(out.returncode == 0, f"ovs-vsctl {' '.join(args)}: {out.stdout}{out.stderr}",
               getattr(self, "vswitchd", None))
        return out.stdout.strip()

    def ofctl(self, *args):
        out = subprocess.run(["ovs-ofctl", *args], capture_output=True, text=True, env=self.env,
                             timeout=30)
        expect(out.returncode == 0, f"ovs-ofctl {' '.join(args)}: {out.stdout}{out.stderr}",
               self.vswitchd)
        return out.stdout

    def add_mana_ports(self, options=None):
        """Both ports of the VF, each named by its MAC in dpdk-devargs (doc/guide.md)."""
        for i, (name, mac) in enumerate(zip(IFACES, MACS)):
            extra = [f"options:{k}={v}" for k, v in (options or {}).items()]
            self.vsctl("add-port", BRIDGE, name, "--", "set", "Interface", name, "type=dpdk",
                       f"options:dpdk-devargs={harness.EMU_BDF},mac={mac}",
                       f"ofport_request={i + 1}", *extra)

    def appctl(self, *args):
        out = subprocess.run(["ovs-appctl", f"--target={self.dir / 'ovs-vswitchd.ctl'}",
                              f"--timeout={VSCTL_TIMEOUT}", *args], capture_output=True, text=True,
                             timeout=VSCTL_TIMEOUT + 10)
        expect(out.returncode == 0, f"ovs-appctl {' '.join(args)}: {out.stdout}{out.stderr}",
               self.vswitchd)
        return out.stdout

    def interface(self, name, column):
        return self.vsctl("get", "Interface", name, column).strip('"')

    def statistics(self, name):
        text = self.vsctl("get", "Interface", name, "statistics")
        return {k: int(v) for k, v in re.findall(r"([\w]+)=(\d+)", text)}

    def stop(self):
        """Stops ovs-vswitchd as `ovs-appctl exit` does (its ports closed, the emulator ends with
        it), then ovsdb-server; returns ovs-vswitchd's status."""
        self.appctl("exit")
        status = self.vswitchd.finish(timeout=60)
        self.ovsdb.stop(harness.signal.SIGTERM)
        return status

    def warnings(self):
        """The WARN/ERR/EMER lines of ovs-vswitchd's log."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line for line in text.splitlines() if re.search(r"\|(WARN|ERR|EMER)\|", line)]

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_port_up(ovs, name):
    """Waits until OVS has the port with an OpenFlow number and its link up; fails at once with the
    interface's error when OVS gave up on it."""
    def state():
        return {c: ovs.interface(name, c) for c in ("error", "ofport", "link_state")}
    return repeat_until(state, lambda s: s["error"] not in ("", "[]")
                        or (s["ofport"] not in ("[]", "-1") and s["link_state"] == "up"),
                        f"{name} up", timeout=60)


def frames(count, src_port, marker):
    return [Ether(src=PEER_MAC, dst=MACS[src_port]) / IP(src="198.18.0.1", dst="198.18.0.2")
            / UDP(sport=1000 + i, dport=7) / Raw(marker + b"%05d" % i) for i in range(count)]


def bridge_and_check(ovs, counts=(300, 200), xstat_prefix=""):
    """Frames into each wire come out of the other with the egress port's source MAC (Azure drops
    frames whose source is not the port's: doc/emulator.md `--anti-spoof`); OVS's statistics
    agree. `xstat_prefix`: how our xstats are named in OVS's statistics (net_netvsc shows its VF's
    with `vf_`)."""
    ovs.ofctl("del-flows", BRIDGE)
    for i in range(2):
        ovs.ofctl("add-flow", BRIDGE,
                  f"in_port={i + 1},actions=mod_dl_src:{MACS[1 - i]},output:{2 - i}")
    for i in range(2):
        marker = b"ovs-%d-" % i
        capture = Capture(TAPS[1 - i], lambda f, m=marker: f.haslayer(Raw)
                          and bytes(f[Raw]).startswith(m))
        sendp(frames(counts[i], i, marker), iface=TAPS[i])
        try:
            capture.wait_for(counts[i], timeout=60)
        except harness.Failure as e:
            raise harness.Failure(f"{e}; OVS: {ovs.statistics(IFACES[i])}, "
                                  f"{ovs.statistics(IFACES[1 - i])}, "
                                  f"{ovs.ofctl('dump-flows', BRIDGE)}") from e
        out = capture.stop()
        expect(len(out) == counts[i], f"{len(out)} frames out of {TAPS[1 - i]}, sent {counts[i]}")
        expect(all(f[Ether].src == MACS[1 - i] and f[Ether].dst == MACS[i] for f in out),
               f"frames out of {TAPS[1 - i]}: {out[0].summary()}")
        seen = sorted(int(bytes(f[Raw])[len(marker):]) for f in out)
        expect(seen == list(range(counts[i])), f"frames out of {TAPS[1 - i]} not each sent once")
    # OVS refreshes the database's statistics every 5 s (stats-update-interval).
    want = {IFACES[0]: (counts[0], counts[1]), IFACES[1]: (counts[1], counts[0])}
    for name, (rx, tx) in want.items():
        stats = repeat_until(lambda n=name: ovs.statistics(n),
                             lambda s, rx=rx, tx=tx: s.get("rx_packets", 0) >= rx
                             and s.get("tx_packets", 0) >= tx, f"{name} statistics", timeout=60)
        expect(stats["rx_packets"] == rx and stats["tx_packets"] == tx,
               f"{name}: rx_packets {stats['rx_packets']} tx_packets {stats['tx_packets']}, want "
               f"{rx} and {tx}: {stats}")
        # Our own xstats, as OVS picks them (per-queue packets and bytes, *_errors).
        # (Under net_netvsc OVS keeps only the VF's error xstats, with their `vf_` prefix.)
        expect((xstat_prefix or stats.get("rx_q0_packets") == rx)
               and stats.get(xstat_prefix + "tx_cqe_sa_drop_errors") == 0,
               f"{name}: driver xstats missing or wrong: {stats}")
        for k in ("rx_errors", "tx_errors", "rx_dropped", "tx_dropped"):
            expect(stats.get(k, 0) == 0, f"{name}: {k} {stats.get(k)}: {stats}")


def run_bridge(emu_opts, options, check, after):
    """OVS on an emulated VF with two TAP-wired ports added to the bridge: `check(ovs)` while it
    runs, `after(ovs)` once it has exited."""
    ovs = Ovs(["--ports", "2", "--wire", f"tap:{TAPS[0]}", "--wire", f"tap:{TAPS[1]}", *emu_opts])
    try:
        for tap in TAPS:
            bring_up(tap)
        ovs.add_mana_ports(options)
        check(ovs)
        expect(ovs.stop() == 0, "ovs-vswitchd did not exit cleanly", ovs.vswitchd)
        after(ovs)
    finally:
        ovs.cleanup()  # a program still running is stopped by harness.kill_leftovers


# Lines not about any port: this machine reserves no 1 GiB hugepages, and OVS's --in-memory EAL
# has no legacy telemetry socket.
MACHINE_WARNINGS = (r"\|dpdk\|WARN\|EAL: No free \d+ kB hugepages reported on node",
                    r"\|dpdk\|WARN\|TELEMETRY: No legacy callbacks, legacy socket not created")


def expect_no_warnings(ovs, allowed=()):
    bad = [line for line in ovs.warnings()
           if not any(re.search(rx, line) for rx in MACHINE_WARNINGS + tuple(allowed))]
    expect(not bad, "ovs-vswitchd logged:\n" + "\n".join(bad[:20]), ovs.vswitchd)


def check_bridging(ovs, rings):
    for name in IFACES:
        state = wait_port_up(ovs, name)
        expect(state["error"] in ("", "[]"), f"{name}: {state['error']}", ovs.vswitchd)
        expect("driver_name=net_mana" in ovs.interface(name, "status"), f"{name}: not net_mana",
               ovs.vswitchd)
    shown = ovs.appctl("dpif/show")
    for name in IFACES:
        m = re.search(rf"{name} \d+/\d+: \(dpdk: (.*)\)", shown)
        # (OVS 3.1: configured_rxq_descriptors=N, ...; OVS 3.5: n_rxq_desc=N, ...)
        expect(m and re.search(rf"(configured_rxq_descriptors|n_rxq_desc)={rings}(,|$)", m.group(1))
               and re.search(rf"(configured_txq_descriptors|n_txq_desc)={rings}(,|$)", m.group(1)),
               f"{name}: not {rings} descriptors: {shown}", ovs.vswitchd)
    bridge_and_check(ovs)


def test_bridged_with_256_descriptors_on_6_2_limits():
    run_bridge(LIMITS_6_2, SMALL_RINGS, lambda o: check_bridging(o, 256), expect_no_warnings)


def test_bridged_with_default_2048_descriptors_on_2025_limits():
    run_bridge(LIMITS_2025, None, lambda o: check_bridging(o, 2048), expect_no_warnings)


# What OVS 3.1 and ethdev log for a port whose queues cannot take OVS's default 2048 descriptors:
# OVS does not adapt its request to rx/tx_desc_lim (OVS 3.2 does), ethdev refuses the request
# before the driver sees it, and the bridge leaves the port out (doc/guide.md "Open vSwitch").
TOO_MANY_DESCRIPTORS = (
    r"\|dpdk\|ERR\|Invalid value for nb_tx_desc\(=2048\), should be: <= 256, >= 64",
    r"\|netdev_dpdk\|ERR\|Interface mana[01]\(rxq:1 txq:\d+ lsc interrupt mode:false\) "
    r"configure error: Invalid argument",
    r"\|dpif_netdev\|ERR\|Failed to set interface mana[01] new configuration",
    r"\|dpif\|WARN\|netdev@ovs-netdev: failed to add mana[01] as port: Invalid argument",
    r"\|bridge\|WARN\|could not add network device mana[01] to ofproto \(Invalid argument\)")


def ovs_version():
    out = subprocess.run([VSWITCHD, "--version"], capture_output=True, text=True)
    m = re.search(r"Open vSwitch\) (\d+)\.(\d+)", out.stdout)
    expect(m, f"{VSWITCHD} --version: {out.stdout}{out.stderr}")
    return int(m.group(1)), int(m.group(2))


def test_default_2048_descriptors_on_6_2_limits_then_the_fix():
    """OVS's default fails as documented; the documented options, set on the running OVS, make the
    ports work. OVS 3.2 and later (Debian 13's 3.5) fit their request to the driver's limits: there
    the default works at once, with the limit's 256 descriptors."""
    if ovs_version() >= (3, 2):
        run_bridge(LIMITS_6_2, None, lambda o: check_bridging(o, 256), expect_no_warnings)
        return
    def check(ovs):
        for name in IFACES:
            state = wait_port_up(ovs, name)
            expect("could not add network device" in state["error"], f"{name}: {state}",
                   ovs.vswitchd)
        failed = ovs.warnings()
        fix = []  # one transaction: a change to one port would retry the other with 2048 again
        for name in IFACES:
            fix += ["--", "set", "Interface", name,
                    *[f"options:{k}={v}" for k, v in SMALL_RINGS.items()]]
        ovs.vsctl(*fix[1:])
        check_bridging(ovs, 256)
        return failed

    failed_lines = []

    def after(ovs):
        expect(any(re.search(TOO_MANY_DESCRIPTORS[0], line) for line in failed_lines),
               "no line names the limit:\n" + "\n".join(failed_lines), ovs.vswitchd)
        unexpected = [line for line in ovs.warnings() if not any(
            re.search(rx, line) for rx in MACHINE_WARNINGS + TOO_MANY_DESCRIPTORS)]
        expect(not unexpected, "ovs-vswitchd logged:\n" + "\n".join(unexpected[:20]),
               ovs.vswitchd)
        later = ovs.warnings()[len(failed_lines):]
        expect(not later, "logged after the fix:\n" + "\n".join(later), ovs.vswitchd)

    run_bridge(LIMITS_6_2, None, lambda o: failed_lines.extend(check(o)), after)


# net_netvsc 22.11 has no mtu_set (added in DPDK 23.11): OVS says so for each netvsc port.
NETVSC_22_11_WARNINGS = (r"\|netdev_dpdk\|WARN\|Interface mana[01] does not support MTU configuration, "
                         r"max packet size supported is 1500\.",)


def test_bridged_over_netvsc_ports_with_our_vfs():
    """Azure's recommended setup under Open vSwitch (doc/guide.md "Under DPDK's netvsc PMD"): both
    ports of the bridge are net_netvsc ports on the emulated synthetic NICs, each with one of our
    ports as its VF. Unicast frames go through our VFs both ways, with exact counts in OVS's
    statistics and our xstats (net_netvsc's `vf_` ones); the VFs are not ports of their own."""
    ovs = Ovs(["--ports", "2", "--wire", f"tap:{TAPS[0]}", "--wire", f"tap:{TAPS[1]}",
               "--uio-netvsc", "0", "--uio-netvsc", "1", *LIMITS_6_2])
    try:
        for tap in TAPS:
            bring_up(tap)
        # By MAC: OVS 3.1 cannot find a port by its VMBus device name (DPDK 22.11's vmbus bus has
        # no device iteration), and the VF with the same MAC is net_netvsc's (owned), not a port.
        for i, (name, mac) in enumerate(zip(IFACES, MACS)):
            ovs.vsctl("add-port", BRIDGE, name, "--", "set", "Interface", name, "type=dpdk",
                      f"options:dpdk-devargs=class=eth,mac={mac}", f"ofport_request={i + 1}",
                      *[f"options:{k}={v}" for k, v in SMALL_RINGS.items()])
        for name in IFACES:
            state = wait_port_up(ovs, name)
            expect(state["error"] in ("", "[]"), f"{name}: {state['error']}", ovs.vswitchd)
            status = ovs.interface(name, "status")
            expect("driver_name=net_netvsc" in status, f"{name}: not net_netvsc: {status}",
                   ovs.vswitchd)
        # Each synthetic NIC took one of our ports as its VF and switched the data path to it.
        for port in (0, 1):
            reply = harness.emu_ctl(ovs.vswitchd, "netvsc-counters", "0", str(port))
            expect('"data_path_vf":1' in reply.replace(" ", ""),
                   f"synthetic NIC {port}: data path not on the VF: {reply}", ovs.vswitchd)
        bridge_and_check(ovs, xstat_prefix="vf_")
        # Every unicast frame went through our VFs (the emulator's port counters; group frames the
        # TAPs send on their own stay on the synthetic path).
        ports = device_counters(ovs.vswitchd)["ports"]
        got = [(c["rx_frames"], c["tx_frames"]) for c in ports]
        expect(got == [(300, 200), (200, 300)], f"VF frames (rx, tx) per port: {got}",
               ovs.vswitchd)
        expect(ovs.stop() == 0, "ovs-vswitchd did not exit cleanly", ovs.vswitchd)
        expect_no_warnings(ovs, NETVSC_22_11_WARNINGS)
    finally:
        ovs.cleanup()  # a program still running is stopped by harness.kill_leftovers


if __name__ == "__main__":
    harness.main([test_bridged_with_256_descriptors_on_6_2_limits,
                  test_bridged_with_default_2048_descriptors_on_2025_limits,
                  test_default_2048_descriptors_on_6_2_limits_then_the_fix,
                  test_bridged_over_netvsc_ports_with_our_vfs])
