#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# A cache of clean clang-tidy runs for scripts/lint.sh: a file whose check found nothing is not
# checked again while nothing clang-tidy reads for it has changed. Its key is a hash of the
# clang-tidy version, .clang-tidy, the file's compile command and the path and content of every
# file that command includes (the compiler's own dependency list, -M), so a changed header re-checks
# every file that includes it.
#   scripts/tidy-cache.py select CACHE_DIR COMMANDS_DIR REGEX OUT_DIR
#       OUT_DIR/compile_commands.json: the entries of COMMANDS_DIR's whose file matches REGEX and
#       has no clean run in CACHE_DIR; OUT_DIR/keys: their keys. Prints how many were left out.
#   scripts/tidy-cache.py record CACHE_DIR OUT_DIR
#       after a clean clang-tidy run over OUT_DIR's entries: their keys go into CACHE_DIR.
import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys

TOP = pathlib.Path(__file__).resolve().parent.parent


def tidy_version():
    out = subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True, check=True)
    return out.stdout


def dependencies(entry):
    """The files the entry's compile reads: its compiler's -M list (no output file written)."""
    args = shlex.split(entry["command"])
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        kept.append(a)
    out = subprocess.run(kept + ["-M"], cwd=entry["directory"], capture_output=True, text=True)
    if out.returncode != 0:
        return None  # not preprocessable here: always checked
    words = out.stdout.replace("\\\n", " ").split(":", 1)[1].split()
    return sorted({str((pathlib.Path(entry["directory"]) / w).resolve()) for w in words})


def key_of(entry, common):
    deps = dependencies(entry)
    if deps is None:
        return None
    h = hashlib.sha256(common)
    h.update(entry["command"].encode())
    for d in deps:
        h.update(d.encode() + b"\0")
        h.update(pathlib.Path(d).read_bytes())
    return h.hexdigest()


def select(cache, commands, regex, out):
    entries = [e for e in json.loads((pathlib.Path(commands) / "compile_commands.json").read_text())
               if re.search(regex, e["file"])]
    common = (tidy_version() + (TOP / ".clang-tidy").read_text() + regex).encode()
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        keys = list(pool.map(lambda e: key_of(e, common), entries))
    cache = pathlib.Path(cache)
    todo = [(e, k) for e, k in zip(entries, keys) if k is None or not (cache / k).exists()]
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_commands.json").write_text(json.dumps([e for e, _ in todo], indent=1))
    (out / "keys").write_text("".join(k + "\n" for _, k in todo if k))
    print(f"{len(entries) - len(todo)} of {len(entries)} files unchanged since a clean check")


def record(cache, out):
    cache = pathlib.Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    for k in (pathlib.Path(out) / "keys").read_text().split():
        (cache / k).touch()


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "select":
        select(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "record":
        record(*sys.argv[2:])
    else:
        sys.exit(f"usage: {sys.argv[0]} select CACHE_DIR COMMANDS_DIR REGEX OUT_DIR | "
                 f"record CACHE_DIR OUT_DIR")


if __name__ == "__main__":
    main()
