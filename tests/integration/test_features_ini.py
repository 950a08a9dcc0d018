# SPDX-License-Identifier: BSD-3-Clause
"""doc/guides/nics/features/mana.ini against the driver: every key of DPDK 22.11's feature list
(default.ini) has one piece of evidence here, read from a running port in testpmd on the emulator
(capabilities, commands that work or answer "not supported") or, where testpmd shows nothing,
from the ops table and PCI driver flags in the source. A key is in mana.ini if and only if its
evidence says the driver has it ("P" keys included)."""

import lzma
import re
import subprocess
import tarfile

from harness import Failure, Program, TOP, emu_run, expect, main, pmd_args

# Hugepages its DPDK processes take together at their peak (hugepages.py): one testpmd at a time with its default mbuf pool, measured 366 MB.
HUGEPAGES_MB = 512

INI = TOP / "doc/guides/nics/features/mana.ini"
MANA = TOP / "drivers/net/mana"
RST = TOP / "doc/guides/nics/mana.rst"
MARK_CMD, MARK = "show port summary all", r"Number of available ports: \d+"


def rx(flag):
    return ("rx_capa", flag)


def tx(flag):
    return ("tx_capa", flag)


def op(name):
    return ("op", name)


def out(command, pattern):
    """Supported iff `pattern` is in testpmd's answer to `command`."""
    return ("testpmd", command, pattern)


# key -> list of evidence (all must hold for "supported"), or ("fixed", value, reason).
EVIDENCE = {
    "Speed capabilities": [("source", "ethdev_ops.cpp", r"info->speed_capa = RTE_ETH_LINK_SPEED_")],
    "Link speed configuration": [("source", "", r"link_speeds")],
    "Link status": [op("link_update"), out("show port info 0", r"^Link status: up"),
                    out("show port info 0", r"^Link speed: 25 Gbps")],
    "Link status event": [("source", "probe.cpp", r"dev_flags \|= RTE_ETH_DEV_INTR_LSC")],
    "Removal event": [("source", "pci_driver.cpp", r"drv_flags = .*RTE_PCI_DRV_INTR_RMV")],
    "Queue status event": [("source", "", r"RTE_ETH_EVENT_QUEUE_STATE")],
    "Rx interrupt": [op("rx_queue_intr_enable"), op("rx_queue_intr_disable")],
    "Lock-free Tx queue": [tx("MT_LOCKFREE")],
    "Fast mbuf free": [tx("MBUF_FAST_FREE")],
    "Free Tx mbuf on demand": [op("tx_done_cleanup")],
    "Queue start/stop": [op("rx_queue_start"), op("rx_queue_stop"), op("tx_queue_start"),
                         op("tx_queue_stop"),
                         out("port 0 rxq 1 stop\nshow rxq info 0 1", r"^Rx queue state: stopped")],
    "Runtime Rx queue setup": [("source", "", r"RTE_ETH_DEV_CAPA_RUNTIME_RX_QUEUE_SETUP")],
    "Runtime Tx queue setup": [("source", "", r"RTE_ETH_DEV_CAPA_RUNTIME_TX_QUEUE_SETUP")],
    "Shared Rx queue": [("source", "", r"RTE_ETH_DEV_CAPA_RXQ_SHARE")],
    "Burst mode info": [op("rx_burst_mode_get"), op("tx_burst_mode_get"),
                        out("show rxq info 0 0", r"^Burst mode: (Scalar|Vector)"),
                        out("show txq info 0 0", r"^Burst mode: Scalar")],
    "Power mgmt address monitor": [op("get_monitor_addr")],
    # Y: mtu_set takes 68..the netdev's max MTU (9000 on Azure), jumbo frames included (doc/guide.md)
    "MTU update": [op("mtu_set"), out("port config mtu 0 1400\nshow port info 0", r"^MTU: 1400"),
                   out("show port info 0", r"^Maximum configurable length of RX packet: 9014")],
    "Buffer split on Rx": [rx("BUFFER_SPLIT")],
    "Scattered Rx": [rx("SCATTER")],
    "LRO": [rx("TCP_LRO")],
    "TSO": [tx("TCP_TSO")],
    "Promiscuous mode": [op("promiscuous_enable")],
    "Allmulticast mode": [op("allmulticast_enable")],
    "Unicast MAC filter": [op("mac_addr_add")],
    "Multicast MAC filter": [op("set_mc_addr_list")],
    "RSS hash": [rx("RSS_HASH"), out("show port info 0", r"^Supported RSS offload flow types:")],
    "RSS key update": [op("rss_hash_update"), op("rss_hash_conf_get"),
                       out("show port 0 rss-hash key", r"RSS key:\s*[0-9A-Fa-f]{80}")],
    "RSS reta update": [op("reta_update")],
    "Inner RSS": [("source", "", r"RTE_ETH_RSS_LEVEL_INNERMOST")],
    "VMDq": [op("mac_addr_add"), rx("VMDQ")],
    "SR-IOV": [op("set_vf_rate_limit")],
    "DCB": [op("get_dcb_info")],
    "VLAN filter": [rx("VLAN_FILTER")],
    "Flow control": [op("flow_ctrl_get")],
    "Rate limitation": [op("set_queue_rate_limit")],
    "Congestion management": [op("cman_info_get")],
    "Traffic manager": [op("tm_ops_get")],
    "Inline crypto": [rx("SECURITY")],
    "Inline protocol": [tx("SECURITY")],
    "CRC offload": [rx("KEEP_CRC")],
    "VLAN offload": [rx("VLAN_STRIP"), tx("VLAN_INSERT"), op("vlan_offload_set")],
    "QinQ offload": [rx("QINQ_STRIP")],
    "FEC": [op("fec_get")],
    "IP reassembly": [op("ip_reassembly_capability_get")],
    "L3 checksum offload": [rx("IPV4_CKSUM"), tx("IPV4_CKSUM")],
    "L4 checksum offload": [rx("UDP_CKSUM"), rx("TCP_CKSUM"), tx("UDP_CKSUM"), tx("TCP_CKSUM")],
    "Timestamp offload": [rx("TIMESTAMP")],
    "MACsec offload": [rx("MACSEC_STRIP")],
    "Inner L3 checksum": [tx("OUTER_IPV4_CKSUM")],
    "Inner L4 checksum": [tx("OUTER_UDP_CKSUM")],
    "Packet type parsing": [op("dev_supported_ptypes_get"),
                            out("show port 0 ptypes", r"L4_UDP")],
    "Timesync": [op("timesync_enable")],
    "Rx descriptor status": [("source", "", r"rx_descriptor_status ="),
                             out("show port 0 rxq 0 desc 0 status", r"^Desc status = AVAILABLE")],
    "Tx descriptor status": [("source", "", r"tx_descriptor_status ="),
                             out("show port 0 txq 0 desc 0 status", r"^Desc status = DONE")],
    "Basic stats": [op("stats_get"), op("stats_reset"), out("show port stats 0", r"RX-packets:")],
    # the driver's own names (ethdev's generic ones exist for any driver)
    "Extended stats": [op("xstats_get"), op("xstats_get_names"),
                       out("show port xstats 0", r"tx_q0_ring_full")],
    "Stats per queue": [("source", "stats.cpp", r"q_ipackets\[i\] =")],
    "FW version": [op("fw_version_get")],
    "EEPROM dump": [op("get_eeprom")],
    "Module EEPROM dump": [op("get_module_eeprom")],
    "Registers dump": [op("get_reg")],
    "LED": [op("dev_led_on")],
    "Multiprocess aware": [("source", "ethdev_ops.cpp", r"const eth_dev_ops kSecondaryOps")],
    "FreeBSD": ("fixed", False, "built and tested on Linux only"),
    "Linux": ("fixed", True, "rdma-core and the mana/mana_ib kernel drivers"),
    "Windows": ("fixed", False, "Linux only"),
    "ARMv7": ("fixed", False, "tested on x86-64 only"),
    "ARMv8": ("fixed", False, "tested on x86-64 only"),
    "LoongArch64": ("fixed", False, "tested on x86-64 only"),
    "Power8": ("fixed", False, "tested on x86-64 only"),
    "rv64": ("fixed", False, "tested on x86-64 only"),
    "x86-32": ("fixed", False, "tested on x86-64 only"),
    "x86-64": ("fixed", True, "the only architecture built and tested"),
    "Usage doc": ("fixed", RST.exists(), "doc/guides/nics/mana.rst"),
    "Design doc": ("fixed", False, "no DPDK-format design doc"),
    "Perf doc": ("fixed", False, "no DPDK-format performance report"),
}


def ini_features(text):
    """{key: value} of the [Features] section."""
    section, keys = None, {}
    for line in text.splitlines():
        line = line.split(";")[0].strip()
        if line.startswith("["):
            section = line
        elif section == "[Features]" and "=" in line:
            key, value = (s.strip() for s in line.split("=", 1))
            keys[key] = value
    return keys


def dpdk_default_ini():
    """DPDK 22.11's default.ini from Debian's source package, when scripts/setup.sh fetched it."""
    for tarball in sorted((TOP / ".deps/src").glob("dpdk_22.11*.orig.tar.xz")):
        with tarfile.open(fileobj=lzma.open(tarball)) as tar:
            for member in tar:
                if member.name.endswith("doc/guides/nics/features/default.ini"):
                    return ini_features(tar.extractfile(member).read().decode())
    return None


def primary_ops():
    text = (MANA / "ethdev_ops.cpp").read_text()
    table = re.search(r"kPrimaryOps = \[\] \{(.*?)\}\(\);", text, re.S)
    expect(table, "kPrimaryOps not found in ethdev_ops.cpp")
    return set(re.findall(r"o\.(\w+) =", table.group(1)))


def all_sources():
    return "\n".join(p.read_text() for p in sorted(MANA.glob("*.[ch]*")))


def testpmd_answers(commands):
    """{command: its output} from one interactive testpmd on a one-port emulated VF."""
    argv = [*emu_run(["--ports", "1"]), "--", "dpdk-testpmd", "-l", "0-1", "--file-prefix",
            "doctor-features-ini", "--huge-unlink", *pmd_args(), "--", "-i", "--rxq=2",
            "--txq=2"]  # RSS is on with more than one RX queue
    p = Program(argv, stdin=subprocess.PIPE)
    p.wait_for(r"Port 0: [0-9A-F:]{17}", timeout=60)
    answers = {}
    for command in commands:
        mark = len(p.lines)
        for line in command.split("\n"):
            p.send(line)
        p.send(MARK_CMD)
        p.wait_for(MARK, start=mark, timeout=30)
        answers[command] = "\n".join(p.lines[mark:p.last_index])
    p.send("quit")
    status = p.finish()
    expect(status == 0, f"testpmd exited {status} after quit", p)
    return answers


def test_mana_ini_matches_the_driver():
    claimed = ini_features(INI.read_text())
    default = dpdk_default_ini()
    if default is not None:
        missing, extra = set(default) - set(EVIDENCE), set(EVIDENCE) - set(default)
        expect(not missing and not extra, "the test's keys differ from DPDK 22.11's default.ini: "
               f"missing {sorted(missing)}, extra {sorted(extra)}")
        order = [k for k in default if k in claimed]
        expect(order == list(claimed), f"mana.ini keys are not in default.ini's order: {list(claimed)}")
    unknown = set(claimed) - set(EVIDENCE)
    expect(not unknown, f"mana.ini has keys DPDK 22.11 does not know: {sorted(unknown)}")
    expect(all(v in ("Y", "P") for v in claimed.values()), f"values must be Y or P: {claimed}")

    ops, sources = primary_ops(), all_sources()
    commands = ["show port 0 rx_offload capabilities", "show port 0 tx_offload capabilities"]
    commands += [e[1] for ev in EVIDENCE.values() if isinstance(ev, list) for e in ev
                 if e[0] == "testpmd"]
    answers = testpmd_answers(list(dict.fromkeys(commands)))
    rx_capa = re.findall(r"[A-Z0-9_]+", answers[commands[0]].split(":", 1)[-1])
    tx_capa = re.findall(r"[A-Z0-9_]+", answers[commands[1]].split(":", 1)[-1])
    expect("RSS_HASH" in rx_capa and "MULTI_SEGS" in tx_capa,
           f"capabilities not read: rx {rx_capa} tx {tx_capa}")

    def holds(e):
        kind = e[0]
        if kind == "op":
            return e[1] in ops
        if kind == "rx_capa":
            return e[1] in rx_capa
        if kind == "tx_capa":
            return e[1] in tx_capa
        if kind == "testpmd":
            return re.search(e[2], answers[e[1]], re.M) is not None
        if kind == "source":
            text = (MANA / e[1]).read_text() if e[1] else sources
            return re.search(e[2], text) is not None
        raise Failure(f"unknown evidence {e}")

    wrong = []
    for key, evidence in EVIDENCE.items():
        if evidence[0] == "fixed":
            has, why = evidence[1], evidence[2]
        else:
            results = [holds(e) for e in evidence]
            has, why = all(results), ", ".join(f"{e[-1]}: {r}" for e, r in zip(evidence, results))
            if any(results) and not has:
                wrong.append(f"{key}: only part of its evidence holds ({why})")
                continue
        if has != (key in claimed):
            wrong.append(f"{key}: the driver {'has' if has else 'lacks'} it ({why}) but mana.ini "
                         f"{'does not list' if has else 'lists'} it")
    expect(not wrong, "mana.ini and the driver disagree:\n  " + "\n  ".join(wrong))


if __name__ == "__main__":
    main([test_mana_ini_matches_the_driver])
