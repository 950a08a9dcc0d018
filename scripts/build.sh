#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configure (once) and build the project in BUILD_DIR (default: build). Extra meson options may be
# given as arguments, e.g. scripts/build.sh -Db_sanitize=address,undefined (with BUILD_DIR set).
# MANA_BUILD_SUITES="SUITE..." builds only what the tests of those meson suites need
# (scripts/suite-targets.py): CI's builds that run some suites only.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BUILD_DIR:-$top/build}
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$top" "$@"
elif [ $# -gt 0 ]; then
  meson configure "$dir" "$@" >/dev/null
fi
targets=()
if [ -n "${MANA_BUILD_SUITES:-}" ]; then
  # shellcheck disable=SC2086 # a list of suite names
  mapfile -t targets < <("$top/scripts/suite-targets.py" "$dir" $MANA_BUILD_SUITES)
  [ ${#targets[@]} -gt 0 ] || { echo "build: no targets for suites $MANA_BUILD_SUITES" >&2; exit 1; }
fi
ninja -C "$dir" -j"$(nproc)" "${targets[@]}"
