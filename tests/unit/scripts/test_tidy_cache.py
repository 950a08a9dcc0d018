#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/tidy-cache.py: a file with a clean clang-tidy run is left out until its source, a header
it includes or its compile command changes; a file never recorded, or recorded under another
command, is checked. Runs the script on a two-file project in a temporary folder with g++."""
import json
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[3] / "scripts" / "tidy-cache.py"


def select(cache, commands, out):
    """The files select leaves to check."""
    run = subprocess.run([sys.executable, SCRIPT, "select", cache, commands, "/src/", out],
                         capture_output=True, text=True, check=True)
    entries = json.loads((pathlib.Path(out) / "compile_commands.json").read_text())
    return sorted(pathlib.Path(e["file"]).name for e in entries), run.stdout.strip()


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        src = root / "src"
        src.mkdir()
        (src / "a.h").write_text("inline int a() { return 1; }\n")
        (src / "a.cpp").write_text('#include "a.h"\nint main() { return a(); }\n')
        (src / "b.cpp").write_text("int b() { return 2; }\n")
        commands = root / "db"
        commands.mkdir()

        def write_db(flags):
            (commands / "compile_commands.json").write_text(json.dumps([
                {"directory": str(root), "file": str(src / f),
                 "command": f"g++ {flags} -MD -MQ {f}.o -MF {f}.o.d -o {f}.o -c {src / f}"}
                for f in ("a.cpp", "b.cpp")]))

        write_db("-O2")
        cache, out = root / "cache", root / "out"
        todo, said = select(cache, commands, out)
        expect(todo == ["a.cpp", "b.cpp"], f"an empty cache leaves out {todo}")
        expect(said.startswith("0 of 2"), said)
        subprocess.run([sys.executable, SCRIPT, "record", cache, out], check=True)
        todo, said = select(cache, commands, out)
        expect(todo == [], f"after a clean run, still to check: {todo}")
        expect(said.startswith("2 of 2"), said)
        (src / "a.h").write_text("inline int a() { return 3; }\n")
        todo, _ = select(cache, commands, out)
        expect(todo == ["a.cpp"], f"a header changed: to check {todo}, expected a.cpp")
        write_db("-O1")
        todo, _ = select(cache, commands, out)
        expect(todo == ["a.cpp", "b.cpp"], f"the command changed: to check {todo}")
        expect(not list(root.glob("*.o")), "select wrote an object file")
    print("ok: cached, a changed header and a changed command re-check exactly their files")


if __name__ == "__main__":
    main()
