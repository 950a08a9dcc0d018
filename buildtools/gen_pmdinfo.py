#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the PMD info section of a DPDK driver from its compiled objects.

DPDK's RTE_PMD_REGISTER_* macros leave marker symbols in the objects:
  this_pmd_name<N>                  -> the driver name
  __<drv>_pci_tbl_export            -> the name of the driver's rte_pci_id table symbol
  __<drv>_param_string_export       -> the devargs help string
  __<drv>_kmod_dep_export           -> the kernel-module dependency expression
This script reads them (from .o files or a static archive) with pyelftools and writes a C++ source
holding one `PMD_INFO_STRING=<json>` string per driver, which dpdk-pmdinfo.py finds in .rodata.

usage: gen_pmdinfo.py OUTPUT.cpp INPUT.a|INPUT.o...
"""

import io
import os
import re
import json
import struct
import sys

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

PCI_ID = struct.Struct("<IHHHH")  # class_id, vendor, device, subsystem vendor, subsystem device


def archive_members(data, path):
    """Yield the object files of an ar archive: regular (!<arch>) or GNU thin (!<thin>, whose members
    are files named relative to the archive, as meson builds them)."""
    thin = data.startswith(b"!<thin>\n")
    if not (thin or data.startswith(b"!<arch>\n")):
        yield data
        return
    names = b""
    pos = 8
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[0:16].decode().strip()
        size = int(header[48:58].decode().strip())
        pos += 60
        if name == "//":  # long-name table, stored even in thin archives
            names = data[pos:pos + size]
            pos += size + (size & 1)
            continue
        if name in ("/", "/SYM64/"):
            pos += size + (size & 1)
            continue
        if thin:
            if name.startswith("/") and name[1:].isdigit():
                start = int(name[1:])
                member = names[start:names.index(b"\n", start)].decode().rstrip("/")
            else:
                member = name.rstrip("/")
            with open(os.path.join(os.path.dirname(path), member), "rb") as f:
                yield f.read()
            continue
        body = data[pos:pos + size]
        if body.startswith(b"\x7fELF"):
            yield body
        pos += size + (size & 1)


def plain_name(name):
    """C++ gives the markers (internal-linkage variables) names like _ZL14this_pmd_name0."""
    m = re.fullmatch(r"_ZL(\d+)(\w+)", name)
    return m.group(2)[: int(m.group(1))] if m else name


class ObjectFile:
    def __init__(self, blob):
        self.elf = ELFFile(io.BytesIO(blob))
        self.symbols = {}
        for sec in self.elf.iter_sections():
            if isinstance(sec, SymbolTableSection):
                for sym in sec.iter_symbols():
                    if sym.name and isinstance(sym["st_shndx"], int):
                        self.symbols[plain_name(sym.name)] = sym

    def data(self, name):
        sym = self.symbols.get(name)
        if sym is None:
            return None
        sec = self.elf.get_section(sym["st_shndx"])
        if sec["sh_type"] == "SHT_NOBITS":
            return bytes(sym["st_size"])
        start = sym["st_value"]
        return sec.data()[start:start + sym["st_size"]]

    def string(self, name):
        raw = self.data(name)
        return None if raw is None else raw.split(b"\0", 1)[0].decode()


def pci_ids(obj, table_name):
    raw = obj.data(table_name)
    if raw is None:
        raise SystemExit(f"gen_pmdinfo: PCI table {table_name} not found")
    ids = []
    for off in range(0, len(raw) - PCI_ID.size + 1, PCI_ID.size):
        _cls, vendor, device, sub_vendor, sub_device = PCI_ID.unpack_from(raw, off)
        if vendor == 0:
            break
        ids.append([vendor, device, sub_vendor, sub_device])
    return ids


def drivers_in(obj):
    for sym_name in obj.symbols:
        if not sym_name.startswith("this_pmd_name"):
            continue
        drv = obj.string(sym_name)
        info = {"name": drv}
        for key, tag in (("params", "param_string_export"), ("kmod", "kmod_dep_export")):
            value = obj.string(f"__{drv}_{tag}")
            if value is not None:
                info[key] = value
        table = obj.string(f"__{drv}_pci_tbl_export")
        info["pci_ids"] = pci_ids(obj, table) if table else []
        yield info


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    out, inputs = argv[1], argv[2:]
    found = {}
    for path in inputs:
        with open(path, "rb") as f:
            data = f.read()
        for blob in archive_members(data, path):
            for info in drivers_in(ObjectFile(blob)):
                found[info["name"]] = info
    if not found:
        raise SystemExit("gen_pmdinfo: no RTE_PMD_REGISTER_* driver found in " + " ".join(inputs))
    lines = ["// Generated by buildtools/gen_pmdinfo.py: the PMD info read by dpdk-pmdinfo.py."]
    for name, info in sorted(found.items()):
        text = "PMD_INFO_STRING= " + json.dumps(info, separators=(",", ":"))
        lines.append(f'extern "C" __attribute__((used)) const char {name}_pmd_info[] = {c_string(text)};')
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
