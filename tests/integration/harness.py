# SPDX-License-Identifier: BSD-3-Clause
"""Helpers to run Debian's real DPDK programs in integration tests.

Programs are started with line-buffered stdout (stdbuf -oL), their output is read as it comes, a test
waits for the line it needs (with a deadline, never a blind sleep), and the program is stopped the way
a user stops it (SIGINT for testpmd, which then prints its final statistics and exits 0).

It is the base of the integration tests' toolkit, the modules beside it that every test file uses
(no test file imports another):
- harness.py: where things are (TOP, BUILD, the PMD), the installed DPDK's version, programs
  started and stopped, bounded waits, the emulator's command line and control
  (emu_run, emu_ctl), testpmd under `mana-emu run`, the environment a secondary process needs, the
  test runner (main, run_main: PASS/SKIP/FAIL, MANA_TESTS, the hugepage declaration);
- testpmd_cli.py: commands at testpmd's prompt and what it prints (port stats, forward stats,
  xstats, mbufs outside the pool, telemetry);
- emulator.py: what the emulator reports (verbs objects alive, device, vPort, SQ, synthetic NIC and
  fabric counters, the netdev's MTU);
- launch.py: process layouts (a primary's and its secondaries' lcores, the two NICs of a fabric
  wire, the peers on a pair wire, a looped txonly port, a one-port testpmd on a TAP wire);
- netvsc.py: testpmd over DPDK's net_netvsc with our port as its VF;
- tap_peer.py: the Linux side of a TAP wire (scapy, a reference Toeplitz hash);
- crosscheck.py: another file's tests run for another driver or profile, each in its own process;
- hugepages.py: the suite's hugepage budget.
"""

import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import hugepages

TOP = Path(__file__).resolve().parents[2]  # the source tree
BUILD = Path(os.environ.get("MANA_BUILD_DIR", TOP / "build"))


def _dpdk_version():
    """The installed DPDK's (major, minor), whose programs the tests run (22.11 on Debian 12; 24.11
    and 25.11 in the chroots of scripts/test-dpdk.sh)."""
    out = subprocess.run(["pkg-config", "--modversion", "libdpdk"], capture_output=True, text=True)
    m = re.match(r"(\d+)\.(\d+)", out.stdout)
    if not m:
        raise RuntimeError(f"pkg-config cannot tell the installed DPDK's version: {out.stderr}")
    return int(m.group(1)), int(m.group(2))


DPDK_VERSION = _dpdk_version()
# Where the installed DPDK's libraries are: /usr/lib/<multiarch> for a distribution's, /usr/local/...
# for one built from source (scripts/test-dpdk.sh 23.11, 26.07).
DPDK_LIBDIR = subprocess.run(["pkg-config", "--variable=libdir", "libdpdk"], capture_output=True,
                             text=True).stdout.strip()
BUILT_PMD = BUILD / "drivers/net/mana/librte_net_mana.so"


def _world_writable_ancestor(path):
    for parent in Path(path).resolve().parents:
        if parent.stat().st_mode & 0o002:
            return parent
    return None


def _loadable(path):
    """DPDK's EAL refuses -d plugins below a world-writable folder (e.g. a clone under /tmp): use a
    private copy in /run/mana-pmd-tests then."""
    if _world_writable_ancestor(path) is None:
        return path
    safe = Path("/run/mana-pmd-tests")
    safe.mkdir(mode=0o755, exist_ok=True)
    os.chmod(safe, 0o755)
    copy = safe / path.name
    shutil.copy2(path, copy)
    return copy


# MANA_PMD=system: the DPDK programs use the net_mana of the installed DPDK, which their EAL loads
# from its plugin folder (no -d); the cross-check runs another DPDK's driver this way
# (scripts/crosscheck-trixie.sh). Otherwise they load the one built here.
SYSTEM_PMD = os.environ.get("MANA_PMD") == "system"
PMD = None if SYSTEM_PMD else _loadable(BUILT_PMD)
MANA_EMU = BUILD / "emu/tool/mana-emu"
# A named set of hardware/kernel behaviours (mana-emu run --profile; doc/emulator.md) under which
# every emulator this test process starts runs; empty: mana-emu's defaults.
PROFILE = os.environ.get("MANA_EMU_PROFILE", "")
# Options that change single behaviours of that profile (e.g. ["--hw", "vport-offset=0"]), space
# separated in MANA_EMU_PROFILE_OVERRIDES (given by crosscheck.py to a test file it runs).
PROFILE_OVERRIDES = os.environ.get("MANA_EMU_PROFILE_OVERRIDES", "").split()


def _elf_machine(path):
    """The e_machine of an ELF file (62: x86-64, 183: AArch64)."""
    with open(path, "rb") as f:
        header = f.read(20)
    return int.from_bytes(header[18:20], "little")


# The programs under test were built for another architecture than this Python's and run under
# qemu-user (arm64 on x86-64: scripts/test-arm64.sh), some 3 to 10 times slower.
EMULATED_CPU = _elf_machine(BUILD / "emu/tool/mana-emu") != _elf_machine(sys.executable) \
    if (BUILD / "emu/tool/mana-emu").exists() else False
# Every bounded wait of the harness is this many times as long (MANA_TEST_TIME_SCALE; 3 under
# qemu-user).
TIME_SCALE = float(os.environ.get("MANA_TEST_TIME_SCALE") or (3 if EMULATED_CPU else 1))
OUTPUT_MARK = "\noutput:\n"  # a failure's reason ends here; the program output it carries follows


# MANA_SIMD_BITWIDTH=64|128: every DPDK program runs with --force-max-simd-bitwidth=N, so the
# driver takes its scalar (64) or 128-bit vector RX (SSE4.1, Neon) instead of the CPU's widest
# (doc/guide.md "RX implementation"); empty: the EAL's default.
SIMD_BITWIDTH = os.environ.get("MANA_SIMD_BITWIDTH", "")


def expected_rx_burst_mode():
    """The RX burst mode (`show rxq info`) the driver must report: under MANA_SIMD_BITWIDTH the one
    that bit width allows, else whichever the CPU has."""
    if SIMD_BITWIDTH == "64":
        return r"Scalar"
    if SIMD_BITWIDTH == "128":
        return r"Vector (SSE4\.1|Neon)"
    return r"(Scalar|Vector (SSE4\.1|AVX2|Neon))"


def pmd_args(pmd=None):
    """The EAL arguments that load the driver under test (and set MANA_SIMD_BITWIDTH's limit)."""
    simd = [f"--force-max-simd-bitwidth={SIMD_BITWIDTH}"] if SIMD_BITWIDTH else []
    if pmd is None and SYSTEM_PMD:
        return simd
    return ["-d", str(pmd or PMD), *simd]


class Failure(Exception):
    pass


class Skip(Exception):
    """A test that cannot apply (under the current profile): its message says why."""


def emu_run(emu_opts):
    """The `mana-emu run` command line with `emu_opts`: the profile first, so that a test's own
    options override it."""
    profile = ["--profile", PROFILE] if PROFILE else []
    return [MANA_EMU, "run", *profile, *PROFILE_OVERRIDES, *emu_opts]


def emu_hw(emu_opts=()):
    """The open behaviours (key -> value) an emulator started with `emu_opts` runs with: the `hw`
    line of the run config mana-emu writes."""
    out = subprocess.run([*emu_run(emu_opts), "--", "sh", "-c", 'cat "$MANA_EMU_CONFIG"'],
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise Failure(f"mana-emu run {' '.join(emu_opts)}: {out.stdout}{out.stderr}")
    for line in out.stdout.splitlines():
        if line.startswith("hw "):
            return dict(word.split("=", 1) for word in line.split()[1:])
    raise Failure(f"no hw line in the run config:\n{out.stdout}")


_running = []


def kill_leftovers():
    """Ends every program a test started and did not stop (after a failure): a left-over testpmd
    would hold the next test's TAP interface or hugepages."""
    while _running:
        p = _running.pop()
        if p.proc.poll() is None:
            try:
                os.killpg(p.proc.pid, signal.SIGINT)
                p.proc.wait(timeout=20)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                os.killpg(p.proc.pid, signal.SIGKILL)
                p.proc.wait()


class Program:
    """A running program whose merged stdout/stderr is collected line by line."""

    def __init__(self, argv, env=None, stdin=subprocess.DEVNULL):
        self.argv = [str(a) for a in argv]
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(["stdbuf", "-oL", "-eL"] + self.argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=stdin, env=full_env,
                                     start_new_session=True)
        self.lines = []
        self.last_index = 0  # line of the last wait_for match
        self._partial = b""
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        _running.append(self)

    def send(self, line):
        """Types a command into an interactive program (stdin must be a pipe)."""
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def pump(self, timeout=0.1):
        """Reads output for up to `timeout` seconds; False once the program closed its output."""
        return self._pump(timeout)

    def drain(self):
        """Reads all the output the program has written so far, without waiting for more."""
        while self._sel.select(0):
            if not self._pump(0):
                return

    def _pump(self, timeout):
        """Reads what is available within `timeout` seconds; returns False at EOF."""
        if not self._sel.select(timeout):
            return True
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return False
        data = self._partial + chunk
        *full, self._partial = data.split(b"\n")
        for raw in full:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            if os.environ.get("MANA_TEST_VERBOSE"):
                print(line, file=sys.stderr)
        return True

    def wait_for(self, pattern, timeout=30.0, start=0):
        """Waits until a line matching `pattern` appears; returns the match."""
        timeout *= TIME_SCALE
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = start
        while True:
            for i in range(seen, len(self.lines)):
                m = rx.search(self.lines[i])
                if m:
                    self.last_index = i
                    return m
            seen = len(self.lines)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"timed out after {timeout}s waiting for /{pattern}/ from {self.argv[0]}" +
                              OUTPUT_MARK + self.output()[-6000:])
            if not self._pump(min(left, 0.5)) and self.proc.poll() is not None:
                raise Failure(f"{self.argv[0]} exited ({self.proc.returncode}) before /{pattern}/" +
                              self._memory_note() + OUTPUT_MARK + self.output()[-6000:])

    def stop(self, sig=signal.SIGINT, timeout=30.0):
        """Sends `sig` (to the whole session), collects the rest of the output, returns the status."""
        timeout *= TIME_SCALE
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
        deadline = time.monotonic() + timeout
        while self._pump(0.2):
            if time.monotonic() > deadline:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                raise Failure(f"{self.argv[0]} did not exit within {timeout}s of signal {sig}")
        return self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))

    def finish(self, timeout=60.0):
        """Waits for a program that ends by itself; returns its status."""
        timeout *= TIME_SCALE
        deadline = time.monotonic() + timeout
        while self._pump(0.2):
            if time.monotonic() > deadline:
                os.killpg(self.proc.pid, signal.SIGKILL)
                raise Failure(f"{self.argv[0]} still running after {timeout}s")
        return self.proc.wait()

    def output(self):
        return "\n".join(self.lines)

    def _memory_note(self):
        """For a DPDK program that died for want of hugepages: how many were free, and who held them."""
        text = self.output()
        if "Not enough memory available" not in text and "Cannot allocate memory" not in text:
            return ""
        held = ", ".join(hugepages.holders()) or "none"
        return (f" (out of hugepage memory: {hugepages.free_mb()} of {hugepages.total_mb()} MB free now;"
                f" mapped by: {held})")


def eal_args(prefix, extra=()):
    """EAL arguments that keep concurrent tests apart and need few hugepages."""
    return ["-l", "0-1", "--file-prefix", prefix, "--huge-unlink", *pmd_args(), *extra]


EMU_BDF = "7870:00:00.0"


def emu_mac(port, vf=0):
    """The MAC mana-emu gives port `port` (0-based) of VF `vf` by default."""
    return f"00:0d:3a:00:{vf:02x}:{port + 1:02x}"


def testpmd_on_emu(emu_opts, prefix, testpmd_opts, eal_extra=None, interactive=False, pmd=None,
                   secondaries=False, lcores="0-1"):
    """dpdk-testpmd under `mana-emu run`, probing the emulated VF with our PMD (or `pmd`). Its
    hugepage files are unlinked at once unless secondary processes will need to map them.
    `lcores`: an EAL --lcores map (lcore ids of the processes of one DPDK instance must differ: each
    lcore id has its own mempool cache, shared by every process)."""
    eal = ["--lcores", lcores, "--file-prefix", prefix, *pmd_args(pmd)]
    if not secondaries:
        eal.append("--huge-unlink")
    eal += eal_extra if eal_extra is not None else ["-a", EMU_BDF]
    argv = [*emu_run(emu_opts), "--", "dpdk-testpmd", *eal, "--", *testpmd_opts]
    return Program(argv, stdin=subprocess.PIPE if interactive else subprocess.DEVNULL)


def command_pids(p):
    """The process IDs of the program `mana-emu run` started for `p` (its children)."""
    children = subprocess.run(["pgrep", "-P", str(p.proc.pid)], capture_output=True, text=True)
    return [int(pid) for pid in children.stdout.split()]


def child_environ(p, name):
    """The value of `name` in the environment of the program `mana-emu run` started for `p`."""
    for pid in command_pids(p):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for item in env:
            if item.startswith(name.encode() + b"="):
                return item.split(b"=", 1)[1].decode()
    raise Failure(f"{name} not found in the environment of the children of {p.proc.pid}")


def emulated_env(p):
    """The environment `mana-emu run` gave the program of `p`: a secondary process needs the same
    view of the emulated VF."""
    return {k: child_environ(p, k) for k in ("SYSFS_PCI_DEVICES", "MANA_EMU_CONFIG", "LD_PRELOAD")}


def testpmd_mempool_drivers():
    """The mempool drivers the installed dpdk-testpmd links (Debian's: librte_mempool_dpaa.so.23,
    .25, .26; one built from source with no such driver: none)."""
    ldd = subprocess.run(["ldd", shutil.which("dpdk-testpmd")], capture_output=True, text=True,
                         check=True)
    return sorted(set(re.findall(r"(librte_mempool_\w+\.so\.\d+)", ldd.stdout)))


def pool_user_env(p):
    """emulated_env(p) for a secondary that uses the mempools of the testpmd primary under `p`
    (dpdk-dumpcap copies into its pool, dpdk-proc-info --show-mempool counts the primary's). The
    mempool drivers testpmd links register their ops before the plugins; a pool names its ops by
    index into the process's own table, so in a secondary that does not link them the index names
    other ops: dumpcap's copies fail (22.11), proc-info's count calls another driver and crashes
    (25.11). Preloaded, they give the secondary testpmd's order (doc/guide.md "Installing")."""
    env = emulated_env(p)
    env["LD_PRELOAD"] = ":".join([env["LD_PRELOAD"], *testpmd_mempool_drivers()])
    return env


def _ctl_argv(p, command):
    """`mana-emu ctl` sending `command` to the emulator that runs under `p`."""
    return [MANA_EMU, "ctl", "--control", child_environ(p, "MANA_EMU_CONTROL"), *command]


def emu_ctl(p, *command):
    """Sends one control command to the emulator that runs under `p`; returns the reply line."""
    out = subprocess.run(_ctl_argv(p, command), capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise Failure(f"mana-emu ctl {' '.join(command)}: {out.stdout}{out.stderr}")
    return out.stdout.strip()


def emu_ctl_begin(p, *command):
    """Starts one control command to the emulator under `p` without waiting for its reply (a
    command whose reply comes late, e.g. `remove` under `--hw fatal-event-delay-ms`); its
    `communicate(timeout=...)` gives the reply."""
    return subprocess.Popen(_ctl_argv(p, command), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def repeat_until(step, done, what, timeout=120.0):
    """Calls `step()` until `done(value)` holds for what it returned, and returns that value; fails
    after `timeout` seconds naming `what` and the last value. Each step is itself a bounded wait (a
    stats block, a command's answer), so this is the overall bound of a loop over them."""
    timeout *= TIME_SCALE
    deadline = time.monotonic() + timeout
    while True:
        value = step()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout}s waiting for {what}; last: {value}")


def wait_for_interface(name, timeout=30.0, netns=None):
    """Waits until a network interface exists (the emulator creates TAP wires when it starts)."""
    timeout *= TIME_SCALE
    deadline = time.monotonic() + timeout
    cmd = (["ip", "-n", netns] if netns else ["ip"]) + ["link", "show", name]
    while subprocess.run(cmd, capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            raise Failure(f"interface {name} did not appear within {timeout}s")
        time.sleep(0.05)


def fake_pci_tree(bdf="7870:00:00.0", vendor="0x1414", device="0x00ba"):
    """A minimal sysfs PCI tree (as DPDK 22.11's PCI bus reads it) without any RDMA device."""
    root = Path(tempfile.mkdtemp(prefix="mana-test-pci."))
    dev = root / "devices" / bdf
    dev.mkdir(parents=True)
    (root / "drivers" / "mana").mkdir(parents=True)
    for name, value in (("vendor", vendor), ("device", device), ("subsystem_vendor", "0x1414"),
                        ("subsystem_device", "0x0001"), ("class", "0x020000"), ("numa_node", "0")):
        (dev / name).write_text(value + "\n")
    (dev / "resource").write_text("0x0000000000000000 0x0000000000000000 0x0000000000000000\n" * 6)
    (dev / "driver").symlink_to(root / "drivers" / "mana")
    return root


def expect(cond, message, program=None):
    if not cond:
        tail = (OUTPUT_MARK + program.output()[-6000:]) if program else ""
        raise Failure(message + tail)


def run_tests(named_tests):
    """Runs (name, function) pairs; prints PASS/SKIP/FAIL per test; returns (passed, failed,
    skipped)."""
    passed = failed = skipped = 0
    failures = []  # (name, reason) for the summary after the last test
    for name, fn in named_tests:
        started = time.monotonic()
        try:
            fn()
            passed += 1
            print(f"PASS {name} ({time.monotonic() - started:.1f}s)", flush=True)
        except Skip as e:
            skipped += 1
            print(f"SKIP {name}: {e}", flush=True)
        except Failure as e:
            failed += 1
            print(f"FAIL {name}: {e}", flush=True)
            failures.append((name, str(e)))
        except Exception as e:  # a crash in one test (e.g. scapy's) fails that test only
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
            failures.append((name, f"{type(e).__name__}: {e}"))
        finally:
            kill_leftovers()
    # Each failure's reason again without the program output it carried: meson's error log keeps
    # only the last 100 lines, and later tests' output would push the reason out of it.
    for name, reason in failures:
        print(f"FAILED {name}: {reason.split(OUTPUT_MARK)[0][-1500:]}", flush=True)
    return passed, failed, skipped


# DPDK v23.11.0's net_netvsc deadlocks when it takes a hot-added VF while its port is started:
# hn_vf_add holds hv->vf_lock for writing and calls hn_vf_mtu_set, which takes it for reading
# (24.11 sets the VF's MTU with rte_eth_dev_set_mtu instead; doc/hardware.md §11.12). The tests
# that re-add the VF under a started netvsc port cannot run on it.
NETVSC_HOT_ADD_DEADLOCKS = DPDK_VERSION == (23, 11)


def not_on_this_dpdk(tests, names, why):
    """`tests` without those named in `names`, each of them printed with `why` (a visible line in
    the test's output, for a DPDK whose own driver cannot run them)."""
    for fn in tests:
        if fn.__name__ in names:
            print(f"not run on DPDK {DPDK_VERSION[0]}.{DPDK_VERSION[1]}: {fn.__name__}: {why}")
    return [fn for fn in tests if fn.__name__ not in names]


def main(tests):
    """Runs the test functions; prints 'N passed, N failed, N skipped' (read by CI). Exit status:
    1 on a failure; 77 (meson's SKIP) when every test skipped; 1 too when any test skipped under
    CI=true, where every registered test must run. The calling test file declares its hugepage
    need as HUGEPAGES_MB (hugepages.py)."""
    if PROFILE:
        print(f"emulator profile: {PROFILE} (MANA_EMU_PROFILE)")
    if SIMD_BITWIDTH:
        print(f"SIMD bit width: {SIMD_BITWIDTH} (MANA_SIMD_BITWIDTH)")
    only = os.environ.get("MANA_TESTS")  # a comma-separated subset of the test names
    chosen = [fn for fn in tests if not only or fn.__name__ in only.split(",")]
    if not chosen:  # a subset that names none of this file's tests would pass having run nothing
        print(f"FAILED: MANA_TESTS={only} names none of this file's tests")
        sys.exit(1)
    sys.exit(run_main([(fn.__name__, fn) for fn in chosen]))


def run_main(named_tests):
    """main() for (name, function) pairs; returns the exit status."""
    declared = getattr(sys.modules["__main__"], "HUGEPAGES_MB", None)
    if declared is None:
        print("FAILED: the test file declares no HUGEPAGES_MB (tests/integration/hugepages.py)")
        return 1
    if declared:
        missing = hugepages.require(declared)
        if missing:
            print(f"FAILED: {missing}")
            print(f"0 passed, {len(named_tests)} failed, 0 skipped")
            return 1
    sampler = hugepages.PeakSampler()
    passed, failed, skipped = run_tests(named_tests)
    line, over = hugepages.check_peak(sampler.stop(), declared)
    print(line)
    failed += over
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed:
        return 1
    if skipped and os.environ.get("CI") == "true":
        print(f"FAILED: {skipped} test(s) skipped under CI=true, where every registered test must run")
        return 1
    return 77 if skipped and not passed else 0
