"""Helpers to run Debian's real DPDK programs in integration tests.

Programs are started with line-buffered stdout (stdbuf -oL), their output is read as it comes, a test
waits for the line it needs (with a deadline, never a blind sleep), and the program is stopped the way
a user stops it (SIGINT for testpmd, which then prints its final statistics and exits 0).
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

BUILD = Path(os.environ.get("MANA_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
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


PMD = _loadable(BUILT_PMD)
MANA_EMU = BUILD / "emu/tool/mana-emu"


class Failure(Exception):
    pass


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
        self._partial = b""
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)

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
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = start
        while True:
            for i in range(seen, len(self.lines)):
                m = rx.search(self.lines[i])
                if m:
                    return m
            seen = len(self.lines)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"timed out after {timeout}s waiting for /{pattern}/ from {self.argv[0]};"
                              f" output:\n" + self.output()[-6000:])
            if not self._pump(min(left, 0.5)) and self.proc.poll() is not None:
                raise Failure(f"{self.argv[0]} exited ({self.proc.returncode}) before /{pattern}/;"
                              f" output:\n" + self.output()[-6000:])

    def stop(self, sig=signal.SIGINT, timeout=30.0):
        """Sends `sig` (to the whole session), collects the rest of the output, returns the status."""
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
        deadline = time.monotonic() + timeout
        while self._pump(0.2):
            if time.monotonic() > deadline:
                os.killpg(self.proc.pid, signal.SIGKILL)
                raise Failure(f"{self.argv[0]} still running after {timeout}s")
        return self.proc.wait()

    def output(self):
        return "\n".join(self.lines)


def eal_args(prefix, extra=()):
    """EAL arguments that keep concurrent tests apart and need few hugepages."""
    return ["-l", "0-1", "--file-prefix", prefix, "--huge-unlink", "-m", "256", "-d", PMD, *extra]


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
        tail = ("\noutput:\n" + program.output()[-6000:]) if program else ""
        raise Failure(message + tail)


def main(tests):
    """Runs the named test functions; prints 'N passed, N failed' (read by CI) and exits non-zero on
    failure."""
    passed = failed = 0
    for fn in tests:
        try:
            fn()
            passed += 1
            print(f"PASS {fn.__name__}")
        except Failure as e:
            failed += 1
            print(f"FAIL {fn.__name__}: {e}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
