#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""mana-doctor: checks an Azure VM for what DPDK's net_mana needs, prints the fix for each problem and
the testpmd command line for this VM, and says "ready" only when nothing blocks DPDK
(doc/guide.md "Before starting DPDK: mana-doctor").

Exit status: 0 ready, 1 not ready, 2 usage error.

Where it looks (environment, for tests and for other roots):
  SYSFS_PCI_DEVICES   PCI devices (DPDK's variable; mana-emu run sets it)     /sys/bus/pci/devices
  MANA_DOCTOR_SYSFS   class/net, class/infiniband(_verbs), module          /sys, or the root of
                                                                           SYSFS_PCI_DEVICES' tree
  MANA_DOCTOR_PROC    meminfo, mounts, net/route                           /proc
  MANA_DOCTOR_LIBMANA rdma-core's libmana                                  found by the loader
  MANA_DOCTOR_KERNEL  the kernel release the steering check judges         uname -r
  MANA_DOCTOR_MODULES the kernel's module tree (modules.dep, .builtin)     /lib/modules/<release>
  MANA_EMU_CONFIG     under mana-emu run: the emulated kernel's RDMA driver id and RX steering
                      teardown are read from it (RDMA netlink, where the real driver id is read,
                      does not know emulated devices)
"""

import argparse
import ctypes
import ctypes.util
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
from pathlib import Path

PMD_DEFAULT = "@PMD_PATH@"  # meson substitutes the installed plugin's path
MANA_VENDOR = "0x1414"
MANA_DEVICES = {"0x00ba": "VF", "0x00b9": "PF"}
MELLANOX_VENDOR = "0x15b3"
RDMA_DRIVER_MANA = 20  # libmana's driver id in rdma-core >= 44 and the kernel uapi (hardware.md §6.2)
# Azure's testpmd line creates testpmd's default mbuf pool: 155,456 mbufs of 2176 bytes, about
# 360 MiB (measured with DPDK 22.11's testpmd, 2 lcores, one port).
HUGE_MIN_FREE_MB = 400


class Report:
    """Collects findings; FAIL ones make the VM not ready."""

    def __init__(self):
        self.fails = 0

    def line(self, tag, text, fix=None):
        print(f"[{tag:^4}] {text}")
        if fix:
            for i, step in enumerate(fix.split("\n")):
                print(("       fix: " if i == 0 else "            ") + step)

    def ok(self, text):
        self.line("ok", text)

    def info(self, text):
        self.line("info", text)

    def warn(self, text, fix=None):
        self.line("warn", text, fix)

    def fail(self, text, fix):
        self.fails += 1
        self.line("FAIL", text, fix)


def read(path, default=None):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


class Paths:
    def __init__(self):
        self.pci = Path(os.environ.get("SYSFS_PCI_DEVICES", "/sys/bus/pci/devices"))
        derived = self.pci.parents[2] if self.pci.match("*/bus/pci/devices") else Path("/sys")
        self.sys = Path(os.environ.get("MANA_DOCTOR_SYSFS", derived))
        self.proc = Path(os.environ.get("MANA_DOCTOR_PROC", "/proc"))


class Port:
    def __init__(self, pci, ifname, net_dir):
        self.pci, self.ifname, self.net_dir = pci, ifname, net_dir
        self.mac = (read(net_dir / "address") or "").lower()
        self.dev_port = int(read(net_dir / "dev_port", "0") or 0)
        self.up = is_up(net_dir)
        self.netvsc = None  # (name, up, driver) of the synthetic interface with the same MAC
        self.ibdev = None


def is_up(net_dir):
    flags = read(net_dir / "flags")
    if flags is not None:
        return int(flags, 16) & 1 == 1  # IFF_UP: what `ip link set down` clears
    return read(net_dir / "operstate") == "up"


def find_functions(paths):
    """MANA PCI functions {bdf: kind}, and the vendors of the other network functions."""
    mana, others = {}, set()
    for dev in sorted(paths.pci.glob("*")) if paths.pci.is_dir() else []:
        vendor, device = read(dev / "vendor"), read(dev / "device")
        if vendor == MANA_VENDOR and device in MANA_DEVICES:
            mana[dev.name] = MANA_DEVICES[device]
        elif (read(dev / "class") or "").startswith("0x0200"):
            others.add(vendor)
    return mana, others


def class_net(paths):
    """{ifname: folder} of every network interface."""
    base = paths.sys / "class/net"
    return {p.name: p for p in sorted(base.iterdir())} if base.is_dir() else {}


def driver_of(net_dir):
    link = net_dir / "device/driver"
    return os.path.basename(os.readlink(link)) if link.is_symlink() else None


def find_ports(paths, bdf):
    net = paths.pci / bdf / "net"
    ports = [Port(bdf, d.name, d) for d in sorted(net.iterdir())] if net.is_dir() else []
    ports.sort(key=lambda p: p.dev_port)
    interfaces = class_net(paths)
    for port in ports:
        for name, folder in interfaces.items():
            if name != port.ifname and (read(folder / "address") or "").lower() == port.mac:
                port.netvsc = (name, is_up(folder), driver_of(folder))
    return ports


def rdma_devices(paths):
    """{ibdev: (pci bdf, uverbs name or None)} from sysfs."""
    devices = {}
    ib = paths.sys / "class/infiniband"
    for dev in sorted(ib.iterdir()) if ib.is_dir() else []:
        devices[dev.name] = [os.path.basename(os.path.realpath(dev / "device")), None]
    uverbs = paths.sys / "class/infiniband_verbs"
    for u in sorted(uverbs.glob("uverbs*")) if uverbs.is_dir() else []:
        name = read(u / "ibdev")
        if name in devices:
            devices[name][1] = u.name
    return {k: tuple(v) for k, v in devices.items()}


def verbs_device_names():
    """Names of the devices libibverbs lists (None when libibverbs cannot be loaded). Resolved in the
    process's global scope, so an LD_PRELOAD'ed verbs library (the emulator's) answers first."""
    try:
        ctypes.CDLL("libibverbs.so.1", mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(None)
        get, free, name = lib.ibv_get_device_list, lib.ibv_free_device_list, lib.ibv_get_device_name
    except (OSError, AttributeError):
        return None
    get.restype = ctypes.POINTER(ctypes.c_void_p)
    get.argtypes = [ctypes.POINTER(ctypes.c_int)]
    free.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    name.restype = ctypes.c_char_p
    name.argtypes = [ctypes.c_void_p]
    count = ctypes.c_int(0)
    devices = get(ctypes.byref(count))
    if not devices:
        return []
    names = [name(devices[i]).decode() for i in range(count.value)]
    free(devices)
    return names


def _nl_attrs(payload):
    attrs, off = {}, 0
    while off + 4 <= len(payload):
        length, kind = struct.unpack_from("=HH", payload, off)
        if length < 4:
            break
        attrs[kind & 0x3FFF] = payload[off + 4:off + length]
        off += (length + 3) & ~3
    return attrs


def _nl_attr(kind, data):
    return struct.pack("=HH", 4 + len(data), kind) + data + b"\0" * (-len(data) % 4)


def _nl_request(sock, msg_type, flags, attrs=b""):
    """Sends one RDMA netlink request; returns the attribute dicts of its replies."""
    NLM_F_REQUEST, NLMSG_ERROR, NLMSG_DONE, NLM_F_MULTI = 1, 2, 3, 2
    sock.send(struct.pack("=IHHII", 16 + len(attrs), msg_type, NLM_F_REQUEST | flags, 1, 0) + attrs)
    replies = []
    while True:
        data = sock.recv(65536)
        off = 0
        while off + 16 <= len(data):
            length, kind, mflags = struct.unpack_from("=IHH", data, off)
            if length < 16:
                return replies
            if kind == NLMSG_DONE:
                return replies
            if kind == NLMSG_ERROR:
                return replies
            replies.append(_nl_attrs(data[off + 16:off + length]))
            if not mflags & NLM_F_MULTI:
                return replies
            off += (length + 3) & ~3


def kernel_driver_ids():
    """{ibdev: the kernel's RDMA driver id} as libibverbs learns it (RDMA netlink: the device index
    from RDMA_NLDEV_CMD_GET, then RDMA_NLDEV_CMD_GET_CHARDEV "uverbs" -> UVERBS_DRIVER_ID)."""
    emu_config = os.environ.get("MANA_EMU_CONFIG")
    if emu_config:
        text = read(emu_config, "")
        found = re.search(r"^driver_id=(\d+)", text, re.M)
        emu_id = int(found.group(1)) if found else RDMA_DRIVER_MANA
        return {"*": emu_id}
    nldev, cmd_get, cmd_get_chardev = 5, 1, 15  # RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET(_CHARDEV)
    attr_index, attr_name, attr_chardev_type, attr_driver_id = 1, 2, 69, 73
    ids = {}
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 20) as sock:  # NETLINK_RDMA
            sock.settimeout(2.0)
            devices = _nl_request(sock, (nldev << 10) + cmd_get, 0x300)  # NLM_F_DUMP
            for dev in devices:
                if attr_index not in dev or attr_name not in dev:
                    continue
                index = struct.unpack("=I", dev[attr_index][:4])[0]
                name = dev[attr_name].rstrip(b"\0").decode()
                request = _nl_attr(attr_index, struct.pack("=I", index)) + _nl_attr(
                    attr_chardev_type, b"uverbs\0")
                for reply in _nl_request(sock, (nldev << 10) + cmd_get_chardev, 0, request):
                    if attr_driver_id in reply:
                        ids[name] = struct.unpack("=I", reply[attr_driver_id][:4])[0]
    except OSError:
        pass  # no RDMA netlink (no ib_core): the sysfs checks say why
    return ids


def libmana_version():
    """(path, rdma-core version) of libmana, e.g. libmana.so.1.0.44.0 -> 44 (Debian 12),
    libmana.so.1.1.65.0 -> 65 (unstable: the library's ABI minor moved to 1); (None, None) if absent."""
    path = os.environ.get("MANA_DOCTOR_LIBMANA")
    if path is None:
        name = ctypes.util.find_library("mana")
        # The machine's multiarch folder first (x86_64-linux-gnu, aarch64-linux-gnu on Arm VMs).
        multiarch = getattr(sys.implementation, "_multiarch", f"{os.uname().machine}-linux-gnu")
        for folder in (f"/usr/lib/{multiarch}", "/usr/lib64", "/usr/lib", "/usr/local/lib"):
            if name and Path(folder, name).exists():
                path = str(Path(folder, name))
                break
    if not path or not Path(path).exists():
        return None, None
    found = re.search(r"\.so\.1\.\d+\.(\d+)", os.path.realpath(path))
    return path, int(found.group(1)) if found else package_rdma_core_version()


def package_rdma_core_version():
    """rdma-core's version from the package manager when the library's file name has none
    (ibverbs-providers on Debian/Ubuntu, libibverbs on RPM distributions); None if unknown."""
    queries = (["dpkg-query", "-W", "-f", "${Version}", "ibverbs-providers"],
               ["rpm", "-q", "--qf", "%{VERSION}", "libibverbs"])
    for argv in queries:
        if shutil.which(argv[0]) is None:
            continue
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        found = re.match(r"(?:\d+:)?(\d+)", out.stdout.strip()) if out.returncode == 0 else None
        if found:
            return int(found.group(1))
    return None


# ---- the kernel: MANA drivers built at all, and the RX steering fix (doc/guide.md "mana-doctor")

MODULE_CONFIG = {"mana": "CONFIG_MICROSOFT_MANA", "mana_ib": "CONFIG_MANA_INFINIBAND"}


def kernel_release():
    return os.environ.get("MANA_DOCTOR_KERNEL") or os.uname().release


def module_available(paths, name):
    """True when the running kernel has module `name` (loaded, built in, or in its module tree),
    False when its module tree shows it has none, None when there is no module tree to ask."""
    if (paths.sys / "module" / name).is_dir():
        return True
    tree = Path(os.environ.get("MANA_DOCTOR_MODULES", f"/lib/modules/{kernel_release()}"))
    dep, builtin = read(tree / "modules.dep"), read(tree / "modules.builtin", "")
    if dep is None:
        return None
    pattern = rf"(^|/){re.escape(name)}\.ko(\.[a-z]+)?:?($|\s)"
    return bool(re.search(pattern, dep, re.M) or re.search(pattern, builtin, re.M))


def no_module_fail(report, name, what):
    release = kernel_release()
    report.fail(f"this kernel ({release}) has no {name} module ({MODULE_CONFIG[name]} is not set): "
                f"{what}",
                f"boot a kernel built with {MODULE_CONFIG['mana']}=m and "
                f"{MODULE_CONFIG['mana_ib']}=m (the distribution's Azure kernel; mana needs Linux "
                "5.15+, mana_ib 6.2+)")


# dbeb256e8dd8 "RDMA/mana_ib: Disable RX steering on RSS QP destroy" (mainline 7.1) and its stable
# backports (doc/hardware.md §9.22): the first release of each series that has it.
STEERING_FIX_MAINLINE = (7, 1)
STEERING_FIX_STABLE = {(7, 0): 4, (6, 12): 86, (6, 6): 140}
STEERING_FIX = "dbeb256e8dd8 (\"RDMA/mana_ib: Disable RX steering on RSS QP destroy\")"


def steering_fix(release):
    """True / False whether kernel `release` has the steering fix, None when its version cannot tell
    (a series without a known backport, or a distribution kernel that does not number stable
    releases)."""
    found = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?(.*)", release)
    if not found:
        return None
    series, patch, rest = (int(found.group(1)), int(found.group(2))), found.group(3), found.group(4)
    if series >= STEERING_FIX_MAINLINE:
        return True
    if series < (6, 2):
        return None  # no mana_ib: the module checks speak
    if series not in STEERING_FIX_STABLE or patch is None:
        return None
    if int(patch) >= STEERING_FIX_STABLE[series]:
        return True
    # x.y.0 with a suffix: a distribution's numbering (Ubuntu's 6.8.0-1015-azure), not stable's.
    return None if int(patch) == 0 and rest else False


def emulated_steering():
    """Under mana-emu run: the emulated kernel's rx-steering-on-destroy, or None."""
    config = os.environ.get("MANA_EMU_CONFIG")
    found = re.search(r"^hw .*\brx-steering-on-destroy=(keep|clear)\b", read(config, "") if config
                      else "", re.M)
    return found.group(1) if found else None


def check_steering_fix(report):
    release = os.environ.get("MANA_DOCTOR_KERNEL")
    emulated = None if release else emulated_steering()
    if emulated is not None:
        fixed, name = emulated == "clear", "the emulated kernel"
    else:
        release = release or os.uname().release
        fixed, name = steering_fix(release), f"kernel {release}"
    backports = ", ".join(f"{a}.{b}.{p}" for (a, b), p in STEERING_FIX_STABLE.items())
    if fixed is True:
        report.ok(f"{name} disables RX steering when DPDK's RSS QP goes ({STEERING_FIX})")
    elif fixed is False:
        report.warn(f"{name} leaves the vPort's RX steering behind when a DPDK process exits: "
                    "frames that arrive afterwards are lost, and the kernel interface brought up "
                    "next may get RX completions on its TX queues (kernel warnings in "
                    "mana_poll_tx_cq) until steering is programmed again",
                    f"update to a kernel with {STEERING_FIX}: {STEERING_FIX_MAINLINE[0]}."
                    f"{STEERING_FIX_MAINLINE[1]}+, or {backports} and later in their series "
                    "(a distribution kernel may carry it earlier: check its changelog)\n"
                    "until then: stop the traffic to the port before bringing its kernel "
                    "interface up after DPDK")
    else:
        report.info(f"{name}: unknown whether it disables RX steering on RSS QP destroy: check "
                    f"its changelog for {STEERING_FIX} (in {STEERING_FIX_MAINLINE[0]}."
                    f"{STEERING_FIX_MAINLINE[1]}, {backports})")


def check_netvsc_pairs(report, ports):
    """Azure pairs every VF netdev with a synthetic (hv_netvsc) interface of the same MAC."""
    for p in ports:
        if p.netvsc:
            continue
        report.warn(f"{p.ifname} (MAC {p.mac}) has no synthetic netvsc interface with its MAC: "
                    "on Azure the VF's traffic falls back to it while Azure services the VF, and "
                    "broadcast and multicast arrive only there",
                    "modprobe hv_netvsc, and check that nothing changed the VF's MAC (ip link); "
                    "the pair exists on Azure VMs with Accelerated Networking")


def check_vfs(report, paths):
    functions, others = find_functions(paths)
    if functions:
        return functions
    interfaces = class_net(paths)
    netvsc = [n for n, d in interfaces.items() if driver_of(d) == "hv_netvsc"]
    if MELLANOX_VENDOR in others:
        fix = "use DPDK's mlx5 (or mlx4) driver for this VM, not net_mana; or resize to a VM size with MANA"
        why = "this VM's accelerated networking is a Mellanox VF"
    elif netvsc:
        fix = ("enable Accelerated Networking on the NIC (az network nic update --accelerated-networking"
               " true) on a VM size that has MANA, then restart the VM")
        why = f"only synthetic netvsc interfaces ({', '.join(netvsc)}): accelerated networking is off"
    else:
        fix = "run on an Azure VM with Accelerated Networking on a VM size that has MANA"
        why = "no network function at all in " + str(paths.pci)
    report.fail(f"no MANA VF (PCI 1414:00ba): {why}", fix)
    return {}


def check_kernel_objects(report, paths, functions):
    """RDMA device (mana_ib) and uverbs device (ib_uverbs) of every MANA function."""
    devices = rdma_devices(paths)
    by_pci = {}
    for ibdev, (bdf, uverbs) in devices.items():
        if bdf in functions:
            by_pci.setdefault(bdf, []).append((ibdev, uverbs))
    modules = paths.sys / "module"
    for bdf in functions:
        found = by_pci.get(bdf, [])
        if not found and module_available(paths, "mana_ib") is False:
            no_module_fail(report, "mana_ib", f"{bdf} has no RDMA device, which gives DPDK its "
                           "queues")
        elif not found:
            loaded = "" if (modules / "mana_ib").is_dir() else " (module mana_ib is not loaded)"
            report.fail(f"{bdf}: no RDMA device{loaded}: mana_ib gives DPDK its queues",
                        "modprobe mana_ib ib_uverbs   (mana_ib needs Linux 6.2+ or a vendor backport)")
        elif not any(u for _, u in found):
            loaded = "" if (modules / "ib_uverbs").is_dir() else " (module ib_uverbs is not loaded)"
            names = ", ".join(i for i, _ in found)
            report.fail(f"{bdf}: RDMA device {names} has no uverbs device{loaded}",
                        "modprobe ib_uverbs")
        else:
            report.ok(f"{bdf}: RDMA device " + ", ".join(f"{i} ({u})" for i, u in found))
    return by_pci


def check_rdma_core(report, by_pci):
    path, version = libmana_version()
    if path is None:
        report.fail("rdma-core's libmana (the MANA verbs provider) is not installed: the driver "
                    "cannot load or finds no RDMA device",
                    "apt install ibverbs-providers libibverbs1   (rdma-core 44 or later; RHEL and "
                    "Azure Linux: dnf install libibverbs)")
        return
    if version is not None and version < 44:
        report.fail(f"{path}: rdma-core {version} is older than 44, the first with MANA",
                    "install rdma-core 44 or later")
        return
    report.ok(f"rdma-core {version if version else '(version unknown)'}: {path}")
    if version is not None and version < 49:
        report.info(f"rdma-core {version} < 49: libmana allows at most 256 descriptors per queue; "
                    "Open vSwitch 3.1 asks for 2048: give every MANA port "
                    "options:n_rxq_desc=256 options:n_txq_desc=256 (doc/guide.md \"Open vSwitch\")")
    ibdevs = [i for devices in by_pci.values() for i, u in devices if u]
    if not ibdevs:
        return
    listed = verbs_device_names()
    ids = kernel_driver_ids()
    for ibdev in ibdevs:
        kernel_id = ids.get(ibdev, ids.get("*"))
        if kernel_id is not None and kernel_id != RDMA_DRIVER_MANA:
            report.fail(f"{ibdev}: the kernel's RDMA driver id is {kernel_id}, rdma-core's libmana binds "
                        f"{RDMA_DRIVER_MANA}: the kernel and rdma-core disagree (Azure's 'version "
                        "mismatch for rdma-core'; a mana_ib backport numbers MANA differently), so "
                        "libibverbs skips the device or gives it another provider",
                        "install the rdma-core your distribution builds for this kernel, or a kernel "
                        "whose uapi has RDMA_DRIVER_MANA = 20 (upstream 6.2+)")
        elif listed is not None and ibdev not in listed:
            report.fail(f"{ibdev}: libibverbs does not list it (no provider bound: driver id "
                        f"{'unknown' if kernel_id is None else kernel_id})",
                        "check `ibv_devices`; run with IBV_SHOW_WARNINGS=1 to see libibverbs' reason; "
                        "rdma-core and the kernel must agree on MANA's driver id")
        elif listed is None:
            report.warn("libibverbs.so.1 cannot be loaded: the device list was not checked",
                        "apt install libibverbs1")
        else:
            report.ok(f"{ibdev}: listed by libibverbs" +
                      ("" if kernel_id is None else f", driver id {kernel_id}"))


def check_hugepages(report, paths):
    meminfo = read(paths.proc / "meminfo", "")
    value = lambda key: int(re.search(rf"^{key}:\s+(\d+)", meminfo, re.M).group(1)) \
        if re.search(rf"^{key}:", meminfo, re.M) else 0
    total, free, size_kb = value("HugePages_Total"), value("HugePages_Free"), value("Hugepagesize")
    mounted = [line.split()[1] for line in read(paths.proc / "mounts", "").splitlines()
               if len(line.split()) > 2 and line.split()[2] == "hugetlbfs"]
    reserve = "echo 1024 | tee /sys/devices/system/node/node*/hugepages/hugepages-2048kB/nr_hugepages"
    free_mb = free * size_kb // 1024
    if total == 0:
        report.fail("no hugepages reserved (EAL: 'No free 2048 kB hugepages reported')", reserve)
    elif free_mb < HUGE_MIN_FREE_MB:
        report.fail(f"{free} of {total} hugepages free ({free_mb} MiB): testpmd needs about "
                    f"{HUGE_MIN_FREE_MB} MiB for its mbuf pool", reserve + "   (or stop what uses them)")
    else:
        report.ok(f"hugepages: {free} of {total} free ({size_kb} kB each)")
    if not mounted:
        report.fail("hugetlbfs is not mounted (EAL: 'Cannot get hugepage information')",
                    "mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages")


def default_route_ifname(paths):
    for line in read(paths.proc / "net/route", "").splitlines()[1:]:
        fields = line.split()
        if len(fields) > 7 and fields[1] == "00000000" and fields[7] == "00000000":
            return fields[0]
    return None


def choose_port(report, paths, ports, want_mac):
    if want_mac:
        chosen = [p for p in ports if p.mac == want_mac.lower()]
        if not chosen:
            report.fail(f"no MANA port has MAC {want_mac}",
                        "use one of: " + ", ".join(p.mac for p in ports))
            return None
        return chosen[0]
    ssh = default_route_ifname(paths)
    spare = [p for p in ports if ssh is None or ssh not in (p.ifname, p.netvsc and p.netvsc[0])]
    if len(spare) < len(ports):
        report.info(f"{ssh} carries the default route (your SSH session): left to the kernel")
    if not spare:
        report.fail("the only MANA port carries the default route: DPDK would cut the VM off",
                    "attach a second NIC with accelerated networking for DPDK (Azure's example: eth1)")
        return None
    return spare[0]


def check_port_state(report, port):
    synthetic = port.netvsc[0] if port.netvsc else None
    if port.up:
        down = (f"ip link set {synthetic} down\n" if synthetic else "") + f"ip link set {port.ifname} down"
        report.fail(f"{port.ifname} (MAC {port.mac}) is up: the kernel owns the port's vPort, so "
                    "DPDK's queue creation fails (mana_start_tx_queues(): Failed to create qp)", down)
    else:
        report.ok(f"{port.ifname} is down: DPDK can take the port")
    if port.netvsc and port.netvsc[1]:  # doc/hardware.md §6.2 "netvsc reopens its VF"
        report.warn(f"synthetic interface {synthetic} is up: netvsc opens its VF again when the VF "
                    "comes back (Azure servicing), racing DPDK for the port",
                    f"ip link set {synthetic} down")


def lcores():
    cpus = sorted(os.sched_getaffinity(0))
    use = cpus[1:4] if len(cpus) >= 3 else cpus[:2]
    if use == list(range(use[0], use[-1] + 1)):
        return f"{use[0]}-{use[-1]}" if len(use) > 1 else str(use[0])
    return ",".join(map(str, use))


def pmd_args(report, pmd):
    """-d <plugin>, unless the plugin sits in DPDK's own plugin folder (EAL loads it by itself)."""
    path = Path(pmd).resolve()
    if not path.exists():
        report.fail(f"net_mana plugin {pmd} not found", "meson install -C build, or pass --pmd PATH")
        return ["-d", str(path)]
    dpdk_own = [p for p in path.parent.glob("librte_net_*.so*")
                if p.is_file() and not p.name.startswith("librte_net_mana")]
    if dpdk_own:
        report.ok(f"net_mana plugin in DPDK's plugin folder {path.parent}: EAL loads it")
        return []
    report.ok(f"net_mana plugin: {path}")
    return ["-d", str(path)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pmd", default=PMD_DEFAULT, help="net_mana plugin (default: %(default)s)")
    parser.add_argument("--mac", help="the port DPDK should take (default: the first port that "
                        "does not carry the default route)")
    args = parser.parse_args()
    paths = Paths()
    report = Report()
    print(f"mana-doctor: {os.uname().sysname} {os.uname().release}; PCI: {paths.pci}; sysfs: "
          f"{paths.sys}; proc: {paths.proc}")

    functions = check_vfs(report, paths)
    by_pci = check_kernel_objects(report, paths, functions)
    check_rdma_core(report, by_pci)
    check_hugepages(report, paths)
    testpmd = shutil.which("dpdk-testpmd")
    if testpmd is None:
        report.fail("dpdk-testpmd not found", "apt install dpdk   (DPDK 22.11)")
    eal_pmd = pmd_args(report, args.pmd)

    ports = [port for bdf in functions for port in find_ports(paths, bdf)]
    if functions and not ports and module_available(paths, "mana") is False:
        no_module_fail(report, "mana", "the VF stays unbound and the VM runs on synthetic netvsc "
                       "networking only, though Azure reports Accelerated Networking on")
    elif functions and not ports:
        report.fail("the MANA VF has no network interface: the kernel's mana driver is not bound",
                    "modprobe mana")
    if functions:
        check_steering_fix(report)
    if ports:
        print("MANA ports (VF netdev <-> synthetic netvsc interface, paired by MAC):")
        for p in ports:
            netvsc = (f"netvsc {p.netvsc[0]} ({'up' if p.netvsc[1] else 'down'})" if p.netvsc
                      else "no synthetic interface with this MAC")
            print(f"  {p.pci} port {p.dev_port + 1}: {p.ifname} MAC {p.mac} "
                  f"({'up' if p.up else 'down'}), {netvsc}")
        check_netvsc_pairs(report, ports)
    port = choose_port(report, paths, ports, args.mac) if ports else None
    if port is not None:
        check_port_state(report, port)
        line = ["dpdk-testpmd", "-l", lcores(), *eal_pmd, f'--vdev="{port.pci},mac={port.mac}"',
                "--", "--forward-mode=txonly", "--auto-start", "--txd=128", "--rxd=128", "--stats", "2"]
        print(f"testpmd for {port.ifname} (Azure's single-queue test):")
        print("  " + " ".join(line))
    if report.fails:
        print(f"not ready: {report.fails} problem(s) above")
        return 1
    print("ready")
    return 0


if __name__ == "__main__":
    sys.exit(main())
