#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Debian packages (scripts/build-deb.sh) installed with dpkg, as a user installs them: Azure's
documented testpmd command line with no -d on the installed mana-emu, dpdk-dumpcap capturing from
that running primary, dpdk-proc-info reading its stats, then dpkg -r. Where the distribution ships
its own net_mana at the plugin's path (Debian 13, unstable: scripts/test-dpdk.sh), ours diverts it
while installed, and after dpkg -r the distribution's files are back exactly as they were.
With a DPDK built from source into /usr/local (scripts/test-dpdk.sh 23.11, 26.07), which no package
can depend on, the same with `meson install` (into that DPDK's plugin folder, RTE_EAL_PMD_PATH)
and `ninja uninstall` instead of dpkg.

Other tests (and other users of this machine) load their build tree's plugin with -d and must never
see a second net_mana in the system plugin folder. So everything runs inside a private mount
namespace (unshare --mount --propagation private) in which overlayfs covers /usr, /etc, /var and
/run with upper folders on a tmpfs of that namespace, and a private hugetlbfs covers /dev/hugepages
(Azure's line has no --file-prefix: the default one must not meet another process's files). dpkg
really installs and removes there; when the namespace's last process ends, its mounts and every
file written go with it, on a crash too. Outside, the test checks that nothing changed."""

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import harness
from harness import BUILD, EMU_BDF, Failure, Program, TOP, emu_mac, emulated_env, expect

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd with its default mbuf pool and dpdk-dumpcap, measured 400 MB.
HUGEPAGES_MB = 512

FROM_SOURCE = harness.DPDK_LIBDIR.startswith("/usr/local/")  # DPDK built from source: meson install
# The driver's package is named for the DPDK (scripts/build-deb.sh): librte-net-mana23 on 22.11,
# mana-pmd-dpdk25/26 on 24.11/25.11.
PMD_PACKAGE = None if FROM_SOURCE else {(22, 11): "librte-net-mana23", (24, 11): "mana-pmd-dpdk25",
                                        (25, 11): "mana-pmd-dpdk26"}[harness.DPDK_VERSION]
PACKAGES = [] if FROM_SOURCE else [PMD_PACKAGE, "mana-emu", "mana-doctor"]
# Overlays inside the namespace; /usr/local after /usr, whose overlay would hide it (a mount of its
# own where the DPDK built from source lives: scripts/debian-chroot.sh).
COVERED = ["/usr", *(["/usr/local"] if FROM_SOURCE else []), "/etc", "/var", "/run"]
# seeds: Azure's "MANA single queue test", verbatim.
AZURE_LINE = ('dpdk-testpmd -l 1-3 --vdev="$BUS_INFO,mac=$MANA_MAC" -- --forward-mode=txonly '
              '--auto-start --txd=128 --rxd=128 --stats 2')
INSIDE = "--inside-namespace"


def azure_line():
    """Azure's line; on a machine with fewer than 4 CPUs its lcores 1-3 are kept but placed on the
    CPUs there are (the EAL refuses lcores without a CPU)."""
    if os.cpu_count() >= 4:
        return AZURE_LINE
    return AZURE_LINE.replace("-l 1-3", "--lcores 1@0,2@1,3@0")


# ---- outside the namespace ----

def host_state():
    """What installing the packages would change on the host: their status and entries in dpkg's
    database and log, their files, the linker cache. (Not whole-file hashes: other users of the
    machine may install other packages meanwhile.)"""
    state = {}
    for pkg in PACKAGES:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", pkg], capture_output=True, text=True)
        state["status " + pkg] = out.stdout
        state["dpkg info " + pkg] = sorted(str(p) for p in Path("/var/lib/dpkg/info").glob(pkg + "[.:]*"))
        state["dpkg.log " + pkg] = Path("/var/log/dpkg.log").read_text(errors="replace").count(" " + pkg + ":")
    state["ld.so.cache mana"] = re.findall(rb"[\w.]*mana[\w.]*", Path("/etc/ld.so.cache").read_bytes())
    state["net_mana files"] = plugin_folder_net_mana()
    state["other files"] = sorted(p for p in ["/usr/bin/mana-emu", f"/usr/share/doc/{PMD_PACKAGE}",
                                              "/usr/share/doc/mana-emu", "/usr/share/man/man1/mana-emu.1.gz",
                                              "/usr/bin/mana-doctor", "/usr/local/bin/mana-emu",
                                              "/usr/local/bin/mana-doctor", "/usr/local/share/doc/mana-pmd"]
                                  if Path(p).exists())
    return state


def plugin_folder_net_mana():
    """Every net_mana file of the EAL's plugin folder, exactly: a link's target, a file's sha256."""
    pmds = Path(subprocess.run(["pkg-config", "--variable=libdir", "libdpdk"], capture_output=True,
                               text=True).stdout.strip()) / "dpdk"
    return {str(p): f"-> {os.readlink(p)}" if p.is_symlink() else
            hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(pmds.glob("pmds-*/*net_mana*"))}


def build_packages():
    # The driver-SDK headers of the build under test (scripts/test-dpdk.sh's -Ddpdk_sdk_dir=).
    options = json.loads(subprocess.run(["meson", "introspect", "--buildoptions", str(BUILD)],
                                        capture_output=True, text=True, check=True).stdout)
    sdk = next(o["value"] for o in options if o["name"] == "dpdk_sdk_dir")
    out = subprocess.run([TOP / "scripts/build-deb.sh", *(["--sdk", sdk] if sdk else [])],
                         capture_output=True, text=True, timeout=1200)
    if out.returncode != 0:
        raise Failure(f"scripts/build-deb.sh failed:\n{out.stdout}{out.stderr}")
    debs = [line for line in out.stdout.split() if line.endswith(".deb") and "-dbgsym_" not in line]
    expect(len(debs) == len(PACKAGES), f"expected {len(PACKAGES)} packages, got {debs}")
    return debs


def test_installed_package_in_private_namespace():
    debs = [] if FROM_SOURCE else build_packages()
    before = host_state()
    expect(FROM_SOURCE or not before["status " + PMD_PACKAGE].endswith(" installed"),
           f"{PMD_PACKAGE} is installed: {before}")
    try:
        with tempfile.TemporaryDirectory(prefix="debpkg-ns.") as scratch:
            inner = Program(["unshare", "--mount", "--propagation", "private", "--", sys.executable,
                             __file__, INSIDE, scratch, *debs])
            status = inner.finish(timeout=600)
            print(inner.output())
            expect(status == 0, "the test inside the namespace failed (its output is above)")
    finally:
        after = host_state()
        expect(after == before, f"the host changed:\nbefore {before}\nafter  {after}")
    print("the host is as before: " + ", ".join(f"{k}: {v}" for k, v in after.items()))


# ---- inside the namespace ----

def run(*argv, timeout=120):
    out = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise Failure(f"{' '.join(map(str, argv))} failed ({out.returncode}):\n{out.stdout}{out.stderr}")
    return out.stdout


def private_root(scratch):
    """A tmpfs of this namespace holds the overlays' upper folders: nothing reaches the disk."""
    run("mount", "-t", "tmpfs", "debpkg-ns", scratch)
    # Each folder as it is before any overlay (a bind of one mount, as overlayfs takes its lower).
    lowers = [Path(scratch, f"lower{i}") for i in range(len(COVERED))]
    for folder, lower in zip(COVERED, lowers):
        lower.mkdir()
        run("mount", "--bind", folder, lower)
    for i, folder in enumerate(COVERED):
        upper, work = Path(scratch, f"upper{i}"), Path(scratch, f"work{i}")
        upper.mkdir()
        work.mkdir()
        run("mount", "-t", "overlay", "overlay", "-o",
            f"lowerdir={lowers[i]},upperdir={upper},workdir={work}", folder)
    run("mount", "-t", "hugetlbfs", "debpkg-huge", "/dev/hugepages")
    # man-db's trigger would rebuild its index on every install: not what this test is about.
    Path("/var/lib/man-db/auto-update").unlink(missing_ok=True)


def descendants(pid):
    """The pids below `pid` (mana-emu -> bash or testpmd -> ...)."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def mapped_net_mana(p):
    libs = set()
    for pid in descendants(p.proc.pid):
        try:
            libs.update(line.split()[-1] for line in Path(f"/proc/{pid}/maps").read_text().splitlines()
                        if "net_mana" in line)
        except OSError:
            continue
    return libs


def installed_files():
    return [line for pkg in PACKAGES for line in run("dpkg", "-L", pkg).splitlines()
            if Path(line).is_file()]


def captured(capture, count=64):
    """The first `count` frames of a capture file (which may be still being written) as
    'source MAC,source IP,destination IP,UDP port'; waits at most 30 s for tshark."""
    out = subprocess.run(["tshark", "-r", capture, "-c", str(count), "-T", "fields", "-E", "separator=,", "-e", "eth.src",
                          "-e", "ip.src", "-e", "ip.dst", "-e", "udp.dstport"], capture_output=True,
                         text=True, timeout=30)
    return out.stdout.split()


def check_azure_line_dumpcap_proc_info(scratch):
    env = {"BUS_INFO": EMU_BDF, "MANA_MAC": emu_mac(0)}
    p = Program(["mana-emu", "run", "--", "bash", "-c", azure_line()], env=env)
    p.wait_for(r"Tx-pps:\s+[1-9]", timeout=90)
    libs = mapped_net_mana(p)
    expect(libs and all(lib.startswith(harness.DPDK_LIBDIR + "/dpdk/pmds-") for lib in libs),
           f"net_mana mapped from {sorted(libs)}: expected the installed one only", p)
    secondary_env = {**os.environ, **emulated_env(p)}

    capture = Path(scratch, "txonly.pcapng")
    # dumpcap runs until the primary has stopped: when it ends by itself (-c) while the primary
    # forwards, DPDK 22.11's primary may still be copying into the pool dumpcap frees on exit
    # (a segfault in librte_pcapng, 1 run in 5 here; doc/guide.md, "Installing"). The port is
    # named by its PCI address, as dumpcap's users name it.
    dumpcap = Program(["dpdk-dumpcap", "-i", EMU_BDF, "-w", capture], env=harness.pool_user_env(p))
    harness.repeat_until(lambda: captured(capture), lambda frames: len(frames) >= 64,
                         "64 frames in dumpcap's file", timeout=60)

    out = subprocess.run(["dpdk-proc-info", "--", "--stats"], capture_output=True, text=True,
                         timeout=60, env=secondary_env)
    expect(out.returncode == 0, f"dpdk-proc-info failed ({out.returncode}): {out.stdout}{out.stderr}", p)
    tx = re.search(r"TX-packets:\s+(\d+)", out.stdout)
    expect(tx and int(tx.group(1)) > 0, f"no TX packets in dpdk-proc-info --stats:\n{out.stdout}", p)
    expect(p.stop() == 0, "testpmd failed", p)
    dumpcap.stop()  # its goodbye to the stopped primary fails; the file is written

    frames = captured(capture, 1000)
    # testpmd's txonly frames: UDP 198.18.0.1 -> 198.18.0.2 port 9 from the port's own MAC.
    expect(len(frames) >= 64 and all(f == f"{emu_mac(0)},198.18.0.1,198.18.0.2,9" for f in frames),
           f"captured {len(frames)} frames, expected >= 64 txonly frames: {frames[:4]}", dumpcap)
    print(f"azure line: {len(frames)} frames captured, proc-info TX-packets {tx.group(1)}")


def check_two_copies_one_line():
    """The installed plugin and a -d one: the second loaded copy says so in one line."""
    p = Program(["mana-emu", "run", "--", "dpdk-testpmd", "-l", "0-1", "--file-prefix", "debpkg-two",
                 "--huge-unlink", "-d", harness.PMD, "-a", EMU_BDF, "--",
                 "--forward-mode=txonly", "--auto-start", "--stats-period", "1"])
    p.wait_for(r"Tx-pps:\s+[1-9]", timeout=90)
    expect(p.stop() == 0, "testpmd failed", p)
    lines = [line for line in p.lines if "another copy of net_mana" in line]
    expect(len(lines) == 1 and "pmds-" in lines[0].split(" is not used")[0],
           f"expected one line from the installed copy, got {lines}", p)
    print(lines[0])


def diversions():
    return sorted(line for line in run("dpkg-divert", "--list").splitlines() if "net_mana" in line)


def check_distributions_files_diverted(theirs, plugin):
    """The distribution's own plugin files (before: `theirs`) at *.distrib, unchanged, and ours at
    their paths; with no distribution's net_mana (Debian 12) the diversions divert nothing."""
    ours = [f for f in plugin if re.search(r"/librte_net_mana\.so\.\d+(\.\d+)?$", f)]
    expect(len(ours) == 2, f"expected the plugin and its soname link, got {plugin}")
    expect(diversions() == sorted(f"diversion of {f} to {f}.distrib by {PMD_PACKAGE}" for f in ours),
           f"diversions: {diversions()}")
    moved = {f[:-len(".distrib")]: h for f, h in plugin_folder_net_mana().items() if f.endswith(".distrib")}
    expect(moved == {f: h for f, h in theirs.items() if f in ours},
           f"the distribution's files aside: {moved}, before: {theirs}")
    run("dpkg", "--verify", PMD_PACKAGE)  # our files, as packaged, at the plugin's paths
    print(f"diverted: {sorted(moved) or 'nothing (no distribution net_mana)'}")


def check_installed_then_remove(scratch, plugin, remove):
    """What every install is checked for (the installed doctor's default plugin, Azure's line with
    dumpcap and proc-info, a second copy with -d), then `remove` (dpkg -r or ninja uninstall), on
    a failure too."""
    expect(str(Path(plugin[0]).parent / "librte_net_mana.so") in
           run("mana-doctor", "--help").replace("\n", "").replace(" ", ""),
           "mana-doctor's default plugin is not the installed one")
    try:
        check_azure_line_dumpcap_proc_info(scratch)
        check_two_copies_one_line()
    finally:
        harness.kill_leftovers()
        run(*remove, timeout=300)


def inside(scratch, debs):
    private_root(scratch)
    theirs = plugin_folder_net_mana()
    run("dpkg", "-i", *debs, timeout=300)
    files = installed_files()
    plugin = [f for f in files if "/dpdk/pmds-" in f]
    expect(plugin, f"no plugin in {files}")
    check_distributions_files_diverted(theirs, [f for f in run("dpkg", "-L", PMD_PACKAGE).splitlines()
                                                if "/dpdk/pmds-" in f])
    check_installed_then_remove(scratch, plugin, ["dpkg", "-r", *PACKAGES])
    left = [f for f in files if Path(f).exists() and f not in theirs]  # theirs: checked below
    expect(not left, f"dpkg -r left {left}")
    # The distribution's own net_mana (librte-net-mana25/26) back exactly as it was.
    expect(plugin_folder_net_mana() == theirs and not diversions(),
           f"after dpkg -r: {plugin_folder_net_mana()}, diversions {diversions()}; before: {theirs}")
    print(f"after dpkg -r, the plugin folder's net_mana as before: {theirs or 'none'}")


def meson_installed():
    """The files `meson install` of the build under test puts in place."""
    out = run("meson", "introspect", "--installed", BUILD)
    return sorted(set(json.loads(out).values()))


def inside_meson(scratch):
    """meson install, as a user of a DPDK built from source does: the plugin into that DPDK's
    plugin folder, where DPDK's own net_mana (built by default) has the same file names, which
    ours replaces; `ninja uninstall` then removes ours, and DPDK's files are gone with it
    (doc/guide.md, "Other DPDK versions")."""
    private_root(scratch)
    theirs = plugin_folder_net_mana()
    run("meson", "install", "-C", BUILD, "--no-rebuild", timeout=300)
    files = meson_installed()
    plugin = [f for f in files if "/dpdk/pmds-" in f]
    expect(plugin and all(f.startswith(harness.DPDK_LIBDIR + "/dpdk/pmds-") for f in plugin),
           f"the plugin is not in the DPDK's plugin folder: {files}")
    # Ours (meson install rewrites its RUNPATH, so not the build's bytes): the marker every copy of
    # ours exports, which DPDK's own net_mana has not.
    mana_files = [f for f in plugin_folder_net_mana() if not Path(f).is_symlink()]
    expect(len(mana_files) == 1 and "mana_pmd_copy_marker" in run("nm", "-D", mana_files[0]),
           f"the plugin folder's net_mana is not ours: {plugin_folder_net_mana()}")
    check_installed_then_remove(scratch, plugin, ["ninja", "-C", BUILD, "uninstall"])
    left = [f for f in files if Path(f).exists() or Path(f).is_symlink()]
    expect(not left, f"ninja uninstall left {left}")
    # DPDK's own net_mana had exactly our file names (the plugin and its two links): replaced at
    # install, so removed by the uninstall.
    same_names = {f for f in theirs if Path(f).name.startswith("librte_net_mana.so")}
    expect(len(same_names) == 3 and plugin_folder_net_mana() == {f: h for f, h in theirs.items()
                                                                   if f not in same_names},
           f"after ninja uninstall: {plugin_folder_net_mana()}; before: {theirs}")
    print(f"after ninja uninstall, DPDK's own net_mana ({sorted(same_names)}) is gone with ours")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == INSIDE:
        try:
            if FROM_SOURCE:
                inside_meson(sys.argv[2])
            else:
                inside(sys.argv[2], sys.argv[3:])
        except (Failure, subprocess.SubprocessError) as e:
            print(f"FAIL inside the namespace: {e}", flush=True)
            sys.exit(1)
        print("inside the namespace: passed")
        sys.exit(0)
    harness.main([test_installed_package_in_private_namespace])
