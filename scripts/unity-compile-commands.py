#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# A build's compile_commands.json with each unity source (meson's -Dunity=on: one generated .cpp
# that includes a target's sources) replaced by the sources it includes, each with the unity
# file's command, as a build without unity would list them: what clang-tidy checks file by file.
#   scripts/unity-compile-commands.py BUILD_DIR OUT_DIR    writes OUT_DIR/compile_commands.json
import json
import pathlib
import re
import sys

INCLUDE = re.compile(r'^#include\s*[<"](.+)[>"]\s*$')


def sources_of(unity_file):
    """The files a meson unity source includes, in its order."""
    return [m.group(1) for line in unity_file.read_text().splitlines() if (m := INCLUDE.match(line))]


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} BUILD_DIR OUT_DIR")
    build, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    entries = []
    for entry in json.loads((build / "compile_commands.json").read_text()):
        # A build through ccache (meson uses it when installed): clang-tidy wants the compiler.
        entry["command"] = re.sub(r"^(\S*/)?ccache\s+", "", entry["command"])
        path = pathlib.Path(entry["directory"]) / entry["file"]
        if not re.search(r"-unity\d+\.(cpp|c)$", entry["file"]):
            entries.append(entry)
            continue
        for source in sources_of(path):
            real = str(pathlib.Path(source).resolve())
            command = entry["command"].replace(entry["file"], real)
            entries.append({"directory": entry["directory"], "command": command, "file": real})
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_commands.json").write_text(json.dumps(entries, indent=1))


if __name__ == "__main__":
    main()
