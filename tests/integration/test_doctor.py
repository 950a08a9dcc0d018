# SPDX-License-Identifier: BSD-3-Clause
"""mana-doctor on the emulator: each setup fault it knows, injected (mana-emu run options, or fake
/proc and sysfs roots), gives its FAIL line with the fix and "not ready"; the clean VM gives "ready"
and the testpmd line it prints then forwards on the emulated VF (doc/guide.md "mana-doctor")."""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import BUILD, Failure, PMD, Program, emu_run, expect, main, repeat_until
from testpmd_cli import parse_port_stats

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool, measured 370 MB.
HUGEPAGES_MB = 512

DOCTOR = BUILD / "app/mana-doctor"
# An Azure-like VM: the VF netdevs named as Azure names them, each enslaved to a synthetic netvsc
# interface with its MAC.
AZURE_VM = ["--ports", "2", "--wire", "pair", "--ifname", "enP30832p0s0", "--ifname",
            "enP30832p0s1", "--netvsc", "eth1", "--netvsc", "eth2"]
PORT0_MAC = "00:0d:3a:00:00:01"


def doctor(emu_opts, env=None, emulated=True):
    """Runs mana-doctor (under `mana-emu run emu_opts` when `emulated`); returns (status, output)."""
    argv = [DOCTOR, "--pmd", PMD]
    if emulated:
        argv = [*emu_run(emu_opts), "--", *argv]
    full_env = dict(os.environ, **(env or {}))
    out = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=full_env,
                         timeout=60)
    return out.returncode, out.stdout + out.stderr


def expect_fault(emu_opts, fail_pattern, fix_pattern, env=None, emulated=True):
    status, out = doctor(emu_opts, env, emulated)
    expect(status == 1 and out.rstrip().splitlines()[-1].startswith("not ready"),
           f"mana-doctor should say 'not ready' (status {status})\n{out}")
    expect(re.search(r"\[FAIL\] .*" + fail_pattern, out), f"no FAIL line /{fail_pattern}/\n{out}")
    expect(re.search(r"fix: .*" + fix_pattern, out, re.S), f"no fix /{fix_pattern}/\n{out}")
    return out


def testpmd_line(out):
    m = re.search(r"^  (dpdk-testpmd .*)$", out, re.M)
    expect(m, f"no testpmd line in\n{out}")
    argv = shlex.split(m.group(1))
    # The one change: a private --file-prefix, so that this testpmd shares no hugepage files with
    # other DPDK programs on the machine.
    return [argv[0], "--file-prefix", f"doctor{os.getpid()}", "--huge-unlink", *argv[1:]]


def test_ready_and_its_testpmd_line_forwards():
    status, out = doctor(AZURE_VM)
    expect(status == 0 and out.rstrip().endswith("ready"), f"not ready (status {status})\n{out}")
    expect(re.search(r"7870:00:00.0 port 1: enP30832p0s0 MAC 00:0d:3a:00:00:01 \(down\), "
                     r"netvsc eth1 \(down\)", out), f"VF/netvsc pairing missing\n{out}")
    expect(re.search(r"7870:00:00.0 port 2: enP30832p0s1 MAC 00:0d:3a:00:00:02", out), out)
    # rdma-core < 49 (Debian 12's 44): OVS's default 2048 descriptors fail, the doctor names the
    # options; not with Debian 13's 56 or unstable's 65.
    rdma = re.search(r"rdma-core (\d+): ", out)
    expect(rdma, f"no rdma-core version line\n{out}")
    hint = "options:n_rxq_desc=256 options:n_txq_desc=256" in out
    expect(hint == (int(rdma.group(1)) < 49), f"OVS descriptor hint {hint} with rdma-core {rdma.group(1)}\n{out}")
    argv = testpmd_line(out)
    expect(f'--vdev=7870:00:00.0,mac={PORT0_MAC}' in argv, f"not Azure's --vdev form: {argv}")
    p = Program([*emu_run(AZURE_VM), "--", *argv])
    p.wait_for(r"NIC statistics for port 0", timeout=60)

    def sent():
        p.wait_for(r"Tx-bps", timeout=30, start=p.last_index + 1)
        return parse_port_stats(p.output()).get(0, {}).get("TX-packets", 0)
    repeat_until(sent, lambda n: n > 0, "port 0 sends (txonly)", timeout=60)
    expect(p.stop() == 0, "testpmd did not exit cleanly", p)


def test_ready_without_netvsc():
    """A VF netdev with no synthetic interface (mana-emu's default VM) is still a usable port, with
    a warning: Azure pairs every VF with one (its fallback path during servicing)."""
    status, out = doctor(["--ports", "1"])
    expect(status == 0 and "eth1 MAC 00:0d:3a:00:00:01 (down), no synthetic interface" in out,
           f"not ready without netvsc (status {status})\n{out}")
    expect(re.search(r"\[warn\] eth1 \(MAC 00:0d:3a:00:00:01\) has no synthetic netvsc interface "
                     r".*\n\s+fix: modprobe hv_netvsc", out), f"no netvsc-pair warning\n{out}")
    status, out = doctor(AZURE_VM)
    expect("has no synthetic netvsc interface" not in out, f"pair warning with the pair\n{out}")


def test_interface_up():
    out = expect_fault([*AZURE_VM, "--netdev-up", "0"], r"enP30832p0s0 \(MAC 00:0d:3a:00:00:01\) is up",
                       r"ip link set eth1 down\s+ip link set enP30832p0s0 down")
    expect("[warn] synthetic interface eth1 is up" in out, f"no netvsc warning\n{out}")
    # and DPDK indeed cannot start the port
    p = Program([*emu_run([*AZURE_VM, "--netdev-up", "0"]), "--", *testpmd_line(out)])
    p.wait_for(r"Fail to start port 0|the kernel interface enP30832p0s0 is up", timeout=60)
    # testpmd goes on without the port (its start_port() reports the failure and returns 0).
    status = p.stop()
    expect(status == 0, f"testpmd exited {status} on SIGINT", p)


def expect_no_probe(emu_opts, out):
    """DPDK indeed finds no port: the printed line, run under the same fault, loads the driver,
    which finds no RDMA device for the VF."""
    p = Program([*emu_run(emu_opts), "--", *testpmd_line(out)])
    p.wait_for(r"7870:00:00.0: no MANA Ethernet RDMA device belongs to this PCI function", timeout=60)
    status = p.stop()
    expect(status == 0, f"testpmd without a port exited {status} on SIGINT", p)


def test_mana_ib_not_loaded():
    opts = [*AZURE_VM, "--no-module", "mana_ib"]
    out = expect_fault(opts, r"7870:00:00.0: no RDMA device \(module mana_ib is not loaded\)",
                       r"modprobe mana_ib")
    expect_no_probe(opts, out)


def test_ib_uverbs_not_loaded():
    opts = [*AZURE_VM, "--no-module", "ib_uverbs"]
    out = expect_fault(opts,
                       r"RDMA device mana_0 has no uverbs device \(module ib_uverbs is not loaded\)",
                       r"modprobe ib_uverbs")
    expect_no_probe(opts, out)


def test_driver_id_mismatch():
    opts = [*AZURE_VM, "--driver-id", "19"]
    out = expect_fault(opts, r"mana_0: the kernel's RDMA driver id is 19, rdma-core's libmana binds 20",
                       r"rdma-core your distribution builds for this kernel")
    expect_no_probe(opts, out)


def fake_proc(meminfo, mounts):
    root = Path(tempfile.mkdtemp(prefix="doctor-proc."))
    (root / "net").mkdir()
    (root / "meminfo").write_text(meminfo)
    (root / "mounts").write_text(mounts)
    (root / "net/route").write_text(Path("/proc/net/route").read_text())
    return root


def test_no_hugepages():
    root = fake_proc("MemTotal: 8000000 kB\nHugePages_Total:       0\nHugePages_Free:        0\n"
                     "Hugepagesize:       2048 kB\n", "proc /proc proc rw 0 0\n")
    try:
        out = expect_fault(AZURE_VM, r"no hugepages reserved", r"nr_hugepages",
                           env={"MANA_DOCTOR_PROC": str(root)})
        expect("[FAIL] hugetlbfs is not mounted" in out, f"no mount FAIL\n{out}")
    finally:
        shutil.rmtree(root)


def test_hugepages_all_used():
    root = fake_proc("HugePages_Total:     512\nHugePages_Free:       10\nHugepagesize:       2048 kB\n",
                     "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n")
    try:
        expect_fault(AZURE_VM, r"10 of 512 hugepages free \(20 MiB\)", r"nr_hugepages",
                     env={"MANA_DOCTOR_PROC": str(root)})
    finally:
        shutil.rmtree(root)


def test_netvsc_only_vm():
    """No VF at all: a synthetic netvsc interface on VMBus, no PCI network function."""
    root = Path(tempfile.mkdtemp(prefix="doctor-sys."))
    try:
        (root / "bus/pci/devices").mkdir(parents=True)
        (root / "bus/vmbus/drivers/hv_netvsc").mkdir(parents=True)
        dev = root / "bus/vmbus/devices/f8615163-df3e-46c5-913f-f2d2f965ed0e"
        dev.mkdir(parents=True)
        (dev / "driver").symlink_to(root / "bus/vmbus/drivers/hv_netvsc")
        eth0 = root / "class/net/eth0"
        eth0.mkdir(parents=True)
        (eth0 / "address").write_text("00:0d:3a:11:22:33\n")
        (eth0 / "device").symlink_to(dev)
        env = {"SYSFS_PCI_DEVICES": str(root / "bus/pci/devices")}
        expect_fault([], r"no MANA VF \(PCI 1414:00ba\): only synthetic netvsc interfaces \(eth0\)",
                     r"enable Accelerated Networking", env=env, emulated=False)
    finally:
        shutil.rmtree(root)


def test_libmana_older_than_44():
    root = Path(tempfile.mkdtemp(prefix="doctor-lib."))
    try:
        old = root / "libmana.so.1.0.43.0"
        old.write_text("")
        expect_fault(AZURE_VM, r"libmana.so.1.0.43.0: rdma-core 43 is older than 44",
                     r"install rdma-core 44 or later", env={"MANA_DOCTOR_LIBMANA": str(old)})
    finally:
        shutil.rmtree(root)


def test_kernel_steering_fix_by_version():
    """dbeb256e8dd8 and its stable backports decide; a kernel whose number cannot tell is named
    with the commit to look for. A warning only: DPDK runs either way."""
    cases = {"6.12.80": "warn", "7.0.3": "warn", "6.6.139": "warn", "6.12.86": "ok", "7.0.4": "ok",
             "7.1.2": "ok", "6.6.140": "ok", "6.8.0-1015-azure": "info", "6.18.30": "info"}
    for release, tag in cases.items():
        status, out = doctor(AZURE_VM, env={"MANA_DOCTOR_KERNEL": release})
        expect(status == 0, f"{release}: not ready (status {status})\n{out}")
        line = re.search(rf"^\[\s*(\w+)\s*\] kernel {re.escape(release)}[ :].*RX steering.*$", out,
                         re.M)
        expect(line and line.group(1) == tag, f"{release}: expected [{tag}] steering line\n{out}")
        if tag == "warn":
            expect(re.search(r"fix: update to a kernel with dbeb256e8dd8 .*7\.1\+, or 7\.0\.4, "
                             r"6\.12\.86, 6\.6\.140", out), f"{release}: no fix line\n{out}")
        if tag == "info":
            expect("check its changelog for dbeb256e8dd8" in out, f"{release}: no commit\n{out}")


def test_emulated_kernel_steering():
    """Under mana-emu the emulated kernel's rx-steering-on-destroy is what the doctor judges."""
    status, out = doctor([*AZURE_VM, "--hw", "rx-steering-on-destroy=keep"])
    expect(status == 0 and re.search(r"\[warn\] the emulated kernel leaves the vPort's RX steering",
                                     out), f"no steering warning (status {status})\n{out}")
    status, out = doctor(AZURE_VM)
    expect(re.search(r"\[ ok \] the emulated kernel disables RX steering", out),
           f"no steering ok line\n{out}")


def fake_vf_sysfs(modules):
    """A VM whose MANA VF has no driver bound (no netdev, no RDMA device) next to a synthetic eth0,
    and a kernel module tree holding `modules`."""
    root = Path(tempfile.mkdtemp(prefix="doctor-sys."))
    vf = root / "bus/pci/devices/7870:00:00.0"
    vf.mkdir(parents=True)
    (vf / "vendor").write_text("0x1414\n")
    (vf / "device").write_text("0x00ba\n")
    (vf / "class").write_text("0x020000\n")
    eth0 = root / "class/net/eth0"
    eth0.mkdir(parents=True)
    (eth0 / "address").write_text("00:0d:3a:11:22:33\n")
    tree = root / "lib-modules"
    tree.mkdir()
    (tree / "modules.dep").write_text("".join(f"kernel/{m}.ko.zst:\n" for m in modules) +
                                      "kernel/drivers/net/hyperv/hv_netvsc.ko.zst:\n")
    (tree / "modules.builtin").write_text("kernel/drivers/pci/pci-hyperv.ko\n")
    env = {"SYSFS_PCI_DEVICES": str(root / "bus/pci/devices"), "MANA_DOCTOR_MODULES": str(tree),
           "MANA_DOCTOR_KERNEL": "6.6.57.1-1.azl3"}
    return root, env


def test_kernel_without_mana_module():
    """A kernel built without CONFIG_MICROSOFT_MANA: the VF sits unbound and the VM runs on
    synthetic networking (as Microsoft's LISA MANA driver-presence tests describe for an Azure
    Linux build); the doctor names the kernel, not modprobe."""
    root, env = fake_vf_sysfs([])
    try:
        out = expect_fault([], r"this kernel \(6\.6\.57\.1-1\.azl3\) has no mana module "
                           r"\(CONFIG_MICROSOFT_MANA is not set\): the VF stays unbound",
                           r"boot a kernel built with CONFIG_MICROSOFT_MANA=m", env=env,
                           emulated=False)
        expect("has no mana_ib module (CONFIG_MANA_INFINIBAND is not set)" in out,
               f"no mana_ib line\n{out}")
        expect("modprobe mana\n" not in out, f"modprobe for a module the kernel lacks\n{out}")
    finally:
        shutil.rmtree(root)
    # The same VM whose kernel has both modules, not loaded: modprobe is the fix.
    root, env = fake_vf_sysfs(["drivers/net/ethernet/microsoft/mana/mana",
                               "drivers/infiniband/hw/mana/mana_ib"])
    try:
        out = expect_fault([], r"the MANA VF has no network interface", r"modprobe mana", env=env,
                           emulated=False)
        expect("has no mana module" not in out, f"module reported missing\n{out}")
    finally:
        shutil.rmtree(root)


def test_no_libmana():
    expect_fault(AZURE_VM, r"rdma-core's libmana .* is not installed", r"apt install ibverbs-providers",
                 env={"MANA_DOCTOR_LIBMANA": "/nonexistent/libmana.so.1"})


if __name__ == "__main__":
    if not DOCTOR.exists():
        raise Failure(f"{DOCTOR} not built")
    main([test_ready_and_its_testpmd_line_forwards, test_ready_without_netvsc, test_interface_up,
          test_mana_ib_not_loaded, test_ib_uverbs_not_loaded, test_driver_id_mismatch,
          test_no_hugepages, test_hugepages_all_used, test_netvsc_only_vm, test_no_libmana,
          test_libmana_older_than_44, test_kernel_steering_fix_by_version,
          test_emulated_kernel_steering, test_kernel_without_mana_module])
