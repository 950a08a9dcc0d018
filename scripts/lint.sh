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
#      compile_commands.json (BUILD_DIR, default build/).
# Measured on the 2-core build machine: 1 min 35 s (clang-tidy 89 CPU-s over 88 files).
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
if ! run-clang-tidy -p "$commands" -j "$(nproc)" -quiet "$top/(drivers|emu|common|app)/" >"$log" 2>&1 ||
   grep -qE '(warning|error): ' "$log"; then
  grep -E -A3 '(warning|error): ' "$log" >&2 || cat "$log" >&2
  echo "lint: clang-tidy found the problems above (checks: .clang-tidy)" >&2
  exit 1
fi
echo "lint: clang-tidy: no findings"
