#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The memory orderings the data path relies on, checked in the compiled arm64 driver
(doc/hardware.md §4.12). qemu-user runs arm64 code under the host's x86 ordering, so no run can show
a missing barrier: this reads the disassembly and its line table (the .so has -g) instead.

  check_ordering.py OBJDUMP librte_net_mana.so

Doorbells: a store barrier of the outer-shareable or full-system domain comes right before every
doorbell store (no store, call, branch or branch target in between), in the number the source has.
CQEs: on every path from an owner-word load, such a load barrier comes before any load through the
CQE's address (or the ring pointer it was computed from), before that address is stored or passed
on, and before the RX scan, which hands its caller a count, is left. Queue gate and MR table
(Dekker's store then load): their seq_cst exchanges are acquire-release swaps, their seq_cst loads
LDAR (not LDAPR), their release stores STLR."""

import os
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "drivers" / "net" / "mana"

# A DMB or DSB orders accesses only for the observers of its shareability domain. The NIC is in the
# outer shareable one (Linux's dma_wmb/dma_rmb, DPDK's rte_wmb/rte_rmb); the inner shareable one
# (rte_smp_*mb: dmb ish*) holds the CPUs only.
STORE_BARRIERS = {"sy", "st", "osh", "oshst"}
LOAD_BARRIERS = {"sy", "ld", "osh", "oshld"}

# Where the source rings doorbells: functions, their number, and each one's doorbells per queue
# (refill counts in the RX burst if the compiler inlines it there). The RX burst exists once per
# RX implementation built for arm64, scalar and NEON (rx_burst.cpp's RxSimd); its refill only
# differs for AVX2, so on arm64 the two are one function (gcc folds identical instantiations).
REFILL = r"::refill[<(]"
EXPECTED = [("TX burst", r"::tx_burst<", 16, {"SQ": 1}), ("RX burst", r"::rx_burst<", 16, {"CQ": 1}),
            ("RX refill", REFILL, 1, {"RQ": 1}), ("TX reclaim", r"^mana::tx_reclaim\(", 1, {"CQ": 1}),
            ("RX interrupt arm", r"^mana::rx_queue_intr_enable\(", 1, {"CQ": 1}),
            ("RX queue start", r"^mana::rx_queues_start\(", 1, {"RQ": 1})]

LSE = re.compile(r"^(?:swp|cas|ld(?:add|clr|eor|set|[su]max|[su]min))(a|al|l)?[bh]?$")
# Instructions that order by themselves: acquire/release and exclusive accesses, LSE atomics and
# libgcc's outline atomics (-moutline-atomics, Debian's default: LSE when the CPU has it).
ATOMIC = re.compile(r"^(ld(a|ax|x|ap|apu)r|st(l|lx|x|lu)r|swp|cas|ld(add|clr|eor|set|[su]max|[su]min)"
                    r"|__aarch64_)")
OUTLINE = re.compile(r"^__aarch64_(swp|cas|ldadd|ldclr|ldeor|ldset)\d+_(relax|acq|rel|acq_rel|sync)$")
REG = re.compile(r"\b(?:[xw](\d+)|(sp))\b")
ARGS = {f"x{n}" for n in range(8)}
CALLER_SAVED = {f"x{n}" for n in range(19)} | {"x30"}
NO_DEST = {"cmp", "cmn", "tst", "ccmp", "ccmn", "fcmp", "fccmp", "prfm", "nop", "isb", "hint"}


def regs(text):
    return [f"x{m[1]}" if m[1] else "sp" for m in REG.finditer(text)]


class Insn:
    def __init__(self, addr, op, args, chain):
        self.addr, self.op, self.chain, self.target, self.callee = addr, op, chain, None, ""
        args = args.split("//")[0].strip()
        if m := re.search(r"\b([0-9a-f]+) <(.+)>$", args):  # a branch's or call's target
            self.target, self.callee = int(m[1], 16), m[2].removesuffix("@plt")
            args = args[:m.start()].strip().rstrip(",")
        self.args = args
        mem = re.search(r"\[([^\]]*)\]", args)
        self.regs = regs(args[:mem.start()] if mem else args)  # written, or stored
        self.addr_regs = set(regs(mem[1])) if mem else set()  # forming the address
        self.kind = self.classify()

    def classify(self):
        if self.op in ("dmb", "dsb") or LSE.match(self.op):
            return "barrier" if self.op in ("dmb", "dsb") else "rmw"
        if self.op in ("brk", "udf", "hlt"):  # a trap ends the path
            return "end"
        for prefix, kind in (("ld", "load"), ("st", "store"), ("bl", "call"), ("br", "jump"), ("ret", "end")):
            if self.op.startswith(prefix):
                return kind
        return "branch" if self.op == "b" or self.op.startswith(("b.", "cb", "tb")) else "other"

    def dests(self):
        if self.kind in ("load", "call", "rmw"):
            return {"load": set(self.regs), "call": CALLER_SAVED, "rmw": set(self.regs[1:2])}[self.kind]
        return set(self.regs[:1]) if self.kind == "other" and self.op not in NO_DEST else set()

    def __str__(self):
        target = f"{self.target:x} <{self.callee}>" if self.callee else ""
        return f"{self.op} {', '.join(a for a in (self.args, target) if a)}".strip()


def parse(objdump, so):
    """[(demangled name, [Insn])], each instruction with its inline chain of (file, line)."""
    out = subprocess.run([objdump, "-d", "-l", "--inlines", "--no-show-raw-insn", "-C", so],
                         check=True, capture_output=True, text=True).stdout
    funcs, insns, inner, outer, after_insn, real = [], None, None, [], True, {}
    for line in out.splitlines():
        if m := re.match(r"^[0-9a-f]+ <(.+)>:$", line):
            insns, inner, outer = [], None, []
            if not m[1].endswith("@plt"):
                funcs.append((m[1], insns))
        elif m := re.match(r"^(inlined by )?(/\S*):(\d+)", line):
            loc = (real.setdefault(m[2], os.path.realpath(m[2])), int(m[3]))
            if not m[1]:
                inner, outer = loc, []
            elif after_insn:  # objdump prints only the outer chain when only that changed
                outer = [loc]
            else:
                outer.append(loc)
            after_insn = False
        elif (m := re.match(r"^ +([0-9a-f]+):\t(\S+)\t?(.*)$", line)) and insns is not None:
            insns.append(Insn(int(m[1], 16), m[2], m[3], ([inner] if inner else []) + outer))
            after_insn = True
    return funcs


def source_lines(name, pattern, to_end=False):
    """The (file, line)s of drivers/net/mana/`name` that match `pattern` (to the next "}": to_end).
    Found by their text, so that edits elsewhere in the file do not move them."""
    path = SRC / name
    text = path.read_text().splitlines()
    found = [n for n, line in enumerate(text, 1) if re.search(pattern, line)]
    if not found:
        sys.exit(f"FAILED: no line of {path} matches {pattern!r}: update tests/arm64/check_ordering.py")
    if to_end:
        found = range(found[0], text.index("}", found[0]) + 2)
    return {(os.path.realpath(path), n) for n in found}


def at(insn, lines):
    return any(loc in lines for loc in insn.chain)


DOORBELL = source_lines("gdma.h", r"rte_write64_relaxed\(value,")
QUEUES = {q: source_lines("gdma.h", rf"ring_doorbell\(db_page, hw::k{q.title()}DoorbellOffset")
          for q in ("SQ", "RQ", "CQ")}
PEEK = source_lines("gdma.h", r"volatile uint32_t\*>\(e->dw\)\[hw::Cqe::kOwnerDword\]")
SCAN = source_lines("rx_burst.cpp", r"__atomic_load_n\(e, __ATOMIC_RELAXED\)")
SCAN_BODY = source_lines("rx_burst.cpp", r"^inline unsigned cq_ready\(", to_end=True)
# The atomics of the gate's and the MR table's Dekker patterns, and what each must compile to.
ATOMICS = [
    ("seq_cst swap", lambda i, helpers: (LSE.match(i.op) or [0, 0])[1] == "al" or i.op in ("ldaxr", "stlxr")
     or i.callee in helpers,
     [("queue_gate.h", r"\(g\.busy\)\.exchange\(1, std::memory_order_seq_cst"),
      ("queue_gate.cpp", r"\((g\.open|process_open)\)\.exchange\(0, std::memory_order_seq_cst"),
      ("mr_cache.cpp", r"__atomic_fetch_add\(&c_\.readers, 1, __ATOMIC_SEQ_CST")]),
    ("seq_cst load", lambda i, helpers: i.op.startswith("ldar"),
     [("queue_gate.h", r"g\.open\)+\.load\(std::memory_order_seq_cst"),  # gate_enter, gate_is_open
      ("queue_gate.h", r"^\s+\.load\(std::memory_order_seq_cst\) != 0"),  # process_open in gate_enter
      ("queue_gate.cpp", r"busy\.load\(std::memory_order_seq_cst"),
      ("mr_cache.cpp", r"__atomic_load_n\(&c_?\.(table|readers), __ATOMIC_SEQ_CST")]),
    ("release store", lambda i, helpers: i.op.startswith("stlr"),
     [("queue_gate.h", r"\(g\.(busy\)\.store\(0|open\)\.store\(1), std::memory_order_release"),
      ("mr_cache.cpp", r"__atomic_store_n\(&c\.table, next, __ATOMIC_SEQ_CST")]),
    ("acquire load", lambda i, helpers: i.op.startswith(("ldar", "ldapr", "ldapur")),
     [("mr_cache.h", r"__atomic_load_n\(&c\.generation, __ATOMIC_ACQUIRE")])]
ATOMICS = [(what, ok, set().union(*(source_lines(f, p) for f, p in where))) for what, ok, where in ATOMICS]


def check_doorbell(insns, j, targets):
    """(the barrier right before the doorbell store insns[j], None) or (None, why there is none)."""
    weak, missing = "", "no outer-shareable or full-system store barrier"
    for k in range(j - 1, -1, -1):
        if insns[k + 1].addr in targets:
            return None, f"{missing} after the branch target {insns[k + 1].addr:#x}{weak}"
        p = insns[k]
        if p.kind == "barrier" and p.args in STORE_BARRIERS:
            return str(p), None
        if p.kind == "barrier":
            weak = f" ({p} at {p.addr:#x} orders for the CPUs only)"
        elif p.kind not in ("load", "other"):
            return None, f"{missing} after {p} at {p.addr:#x}{weak}"
    return None, f"{missing} before it in the function{weak}"


def flow(ins, held):
    """The registers of `held` (copies of a pointer) still holding it after `ins`."""
    out = held - ins.dests()
    return out | ins.dests() if ins.kind == "other" and held & set(ins.regs[1:]) else out


def check_owner(insns, i, index, targets, scan):
    """Walks every path from the owner load insns[i] until a load barrier: (barriers, {addr: why})."""
    load = insns[i]
    if load.op not in ("ldr", "ldur", "ldar") or not load.args.startswith("w"):
        return set(), {load.addr: f"owner word read by {load} at {load.addr:#x}: not one 32-bit load"}
    ring = set()
    for k in range(i - 1, -1, -1):  # the ring pointer the CQE address was computed from, if still held
        p = insns[k]
        if p.kind not in ("load", "other") or insns[k + 1].addr in targets:
            break
        if p.dests() & load.addr_regs and p.op in ("add", "sub", "mov") and len(p.regs) > 1:
            if not any(p.regs[1] in q.dests() for q in insns[k + 1:i]):
                ring.add(p.regs[1])
            break
    stack = [(i + 1, frozenset(load.addr_regs - load.dests()), frozenset(ring - load.dests()))]
    seen, barriers, problems = set(), set(), {}
    while stack:
        state = stack.pop()
        j, cqe, ring = state
        if state in seen or j >= len(insns):
            continue
        seen.add(state)
        ins = insns[j]
        leaves = ins.kind in ("call", "jump") or (ins.kind == "branch" and ins.target not in index)
        if ins.kind == "barrier" and ins.args in LOAD_BARRIERS:
            barriers.add(str(ins))
            continue
        why = None
        if scan and (leaves or ins.kind == "end" or not at(ins, SCAN_BODY)):
            why = "leaves the RX CQ scan"  # whose caller reads the CQEs it counted
        elif ins.kind in ("load", "rmw") and (cqe | ring) & ins.addr_regs and not at(ins, PEEK | SCAN):
            why = "reads the CQE"
        elif ins.kind in ("store", "rmw") and cqe & set(ins.regs if ins.kind == "store" else ins.regs[:1]):
            why = "stores the CQE address"
        elif leaves and (cqe & ARGS or ins.kind == "jump"):
            why = "jumps to an unknown place" if ins.kind == "jump" else "passes the CQE address on"
        if why:
            problems.setdefault(ins.addr, f"{ins} at {ins.addr:#x} {why} before a load barrier after the "
                                          f"owner load {load} at {load.addr:#x}")
            continue
        cqe, ring = frozenset(flow(ins, cqe)), frozenset(flow(ins, ring))
        if ins.kind == "branch" and not leaves:
            stack.append((index[ins.target], cqe, ring))
        if ins.kind != "end" and ins.op != "b":
            stack.append((j + 1, cqe, ring))
    return barriers, problems


def short(name):
    return re.sub(r"^unsigned short |\(anonymous namespace\)::|mana::|\(.*$", "", name)


def main():
    funcs = parse(sys.argv[1], sys.argv[2])
    if not any(f.startswith(os.path.realpath(SRC)) for _, insns in funcs for i in insns for f, _ in i.chain):
        sys.exit(f"FAILED: the line table of {sys.argv[2]} names no file of {SRC}: built from another tree?")
    by_name = dict(funcs)
    # libgcc's outline atomics of that order: SWPAL/LDADDAL... with LSE, else an LDAXR/STLXR loop.
    helpers = {n for n, _ in funcs if (m := OUTLINE.match(n)) and m[2] in ("acq_rel", "sync")}
    problems, doorbells, owners, lines_done = [], {}, {}, {}
    used = {what: 0 for what, _, _ in ATOMICS}
    for name, insns in funcs:
        targets = {i.target for i in insns if i.kind == "branch"}
        index = {i.addr: n for n, i in enumerate(insns)}
        notes, cqe_problems = {}, {}
        for j, ins in enumerate(insns):
            note = None
            mmio = ins.chain[:1] and ins.chain[0][0].endswith("/rte_io_64.h")  # DPDK's MMIO accessors
            if ins.kind == "store" and (at(ins, DOORBELL) or mmio):
                queue = next((q for q, lines in QUEUES.items() if at(ins, lines)), "other")
                doorbells.setdefault(name, []).append(queue)
                barrier, why = check_doorbell(insns, j, targets)
                if why:
                    problems.append(f"{short(name)}: {queue} doorbell store {ins} at {ins.addr:#x}: {why}")
                note = f"{queue} doorbell store after {barrier or 'no barrier'}"
            if ins.kind == "load" and (at(ins, PEEK) or at(ins, SCAN)):
                owners.setdefault(name, []).append(ins)
                barriers, found = check_owner(insns, j, index, targets, at(ins, SCAN))
                for addr, why in found.items():  # each offending instruction once
                    cqe_problems.setdefault(addr, f"{short(name)}: {why}")
                note = (f"CQE owner load ({'RX scan' if at(ins, SCAN) else 'cq_peek'}) then "
                        f"{' / '.join(sorted(barriers)) or 'no load barrier'}")
            op = ins.callee if ins.kind == "call" else ins.op
            for what, ok, lines in ATOMICS:
                hit = lines.intersection(ins.chain)
                for line in hit:  # each source line must compile to one good instruction at least
                    lines_done.setdefault((name, what, line), 0)
                if hit and ATOMIC.match(op):
                    if not ok(ins, helpers):
                        problems.append(f"{short(name)}: {what} compiled to {ins} at {ins.addr:#x}")
                        continue
                    note = f"{what} {op}"
                    used[what] += 1
                    for line in hit:
                        lines_done[(name, what, line)] += 1
            if note:
                notes[note] = notes.get(note, 0) + 1
        problems += cqe_problems.values()
        if notes:
            print(f"{short(name)}: " + "; ".join(f"{n} × {note}" for note, n in notes.items()))

    # Exact counts where the source tells them, and nothing passes for want of something to check.
    inlined_refill = not any(re.search(REFILL, n) for n in by_name)
    for what, pattern, count, per_func in EXPECTED:
        if inlined_refill and what in ("RX burst", "RX refill"):
            per_func, count = ({**per_func, "RQ": 1}, count) if what == "RX burst" else (per_func, 0)
        names = [n for n in by_name if re.search(pattern, n)]
        if len(names) != count:
            problems.append(f"{what}: {len(names)} functions match {pattern!r}, the source has {count}")
        for n in names:
            got = {q: doorbells.get(n, []).count(q) for q in sorted(set(doorbells.get(n, [])))}
            if got != per_func:
                problems.append(f"{short(n)}: doorbell stores {got or 'none'}, the source has {per_func}")
        print(f"{what}: {len(names)} function(s), each with doorbell stores {per_func}")
    for pattern, kind in ((r"::tx_burst<", PEEK), (r"::rx_burst<", SCAN)):
        for n in (n for n in by_name if re.search(pattern, n)):
            if not any(m in owners and at(owners[m][0], kind)
                       for m in [n] + [i.callee for i in by_name[n] if i.kind == "call"]):
                problems.append(f"{short(n)}: no CQE owner load in it or the functions it calls")
    for (name, what, (path, line)), count in lines_done.items():
        if count == 0:
            problems.append(f"{short(name)}: the {what} of {os.path.basename(path)}:{line} compiled to no "
                            "instruction of that order")
    problems += [f"no {what} of the gate or the MR table in the binary" for what, n in used.items() if n == 0]
    if not doorbells or not owners:
        problems.append("no doorbell store or no CQE owner load found: nothing was checked")
    for p in problems:
        print(f"FAILED: {p}")
    print(f"{sum(map(len, doorbells.values()))} doorbell stores, {sum(map(len, owners.values()))} CQE owner "
          f"loads, {sum(used.values())} gate and MR table atomics checked: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
