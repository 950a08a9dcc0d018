#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Static checks of our C++ sources, as CI runs them (scripts/test.sh, after the build):
#   1. clang-format: every tracked .cpp/.h is formatted as .clang-format says (no drift);
#   2. SPDX: every tracked source file (C/C++, Python, shell, meson) names its licence in its first
#      lines (LICENSE: BSD-3-Clause);
#   3. docs: every relative link and #anchor of README.md and doc/*.md resolves
#      (scripts/check-doc-links.py);
#   4. clang-tidy: the checks .clang-tidy keeps, at zero findings, on the translation units of the
#      drivers, the emulator, common/ and app/ (not the tests), with the build's
#      compile_commands.json (BUILD_DIR, default build/); with MANA_TIDY_CACHE=DIR only the files
#      with no clean run there for what they include now (scripts/tidy-cache.py).
# Measured on the 2-core build machine: 2 min 47 s (clang-tidy 313 CPU-s over 217 files); with
# the cache and no change since, the dependency hashes alone: see doc/testing.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
cd "$top"

git ls-files -z '*.cpp' '*.h' | xargs -0 clang-format --dry-run --Werror
echo "lint: clang-format: no drift"

missing=$(git ls-files '*.cpp' '*.h' '*.c' '*.py' '*.sh' '*meson.build' 'meson_options.txt' .ci/run |
  while read -r f; do head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-3-Clause' || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "lint: no 'SPDX-License-Identifier: BSD-3-Clause' line in the first 3 lines of:" >&2
  echo "$missing" >&2
  exit 1
fi
echo "lint: SPDX: every source file names its licence"

scripts/check-doc-links.py >/dev/null || { echo "lint: broken links in the docs (above)" >&2; exit 1; }
echo "lint: docs: every relative link and anchor resolves"

[ -f "$build/compile_commands.json" ] || { echo "lint: no $build/compile_commands.json: build first" >&2; exit 1; }
log=$(mktemp)
commands=$(mktemp -d)
trap 'rm -rf "$log" "$commands"' EXIT
# The build compiles each target as one unity source (meson.build): clang-tidy takes the files.
scripts/unity-compile-commands.py "$build" "$commands"
files="$top/(drivers|emu|common|app)/"
# MANA_TIDY_CACHE (scripts/test.sh sets it): a folder of clean runs; a file whose check found
# nothing is checked again only once something it includes changed (scripts/tidy-cache.py).
if [ -n "${MANA_TIDY_CACHE:-}" ]; then
  scripts/tidy-cache.py select "$MANA_TIDY_CACHE" "$commands" "$files" "$commands/todo" | sed 's/^/lint: clang-tidy: /'
  tidy_db=$commands/todo
else
  tidy_db=$commands
fi
if [ "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$tidy_db/compile_commands.json")" != 0 ]; then
  if ! run-clang-tidy -p "$tidy_db" -j "$(nproc)" -quiet "$files" >"$log" 2>&1 ||
     grep -qE '(warning|error): ' "$log"; then
    grep -E -A3 '(warning|error): ' "$log" >&2 || cat "$log" >&2
    echo "lint: clang-tidy found the problems above (checks: .clang-tidy)" >&2
    exit 1
  fi
  [ -z "${MANA_TIDY_CACHE:-}" ] || scripts/tidy-cache.py record "$MANA_TIDY_CACHE" "$tidy_db"
fi
echo "lint: clang-tidy: no findings"
