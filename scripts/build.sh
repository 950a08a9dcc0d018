#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configure (once) and build the project in BUILD_DIR (default: build). Extra meson options may be
# given as arguments, e.g. scripts/build.sh -Db_sanitize=address,undefined (with BUILD_DIR set).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BUILD_DIR:-$top/build}
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$top" "$@"
elif [ $# -gt 0 ]; then
  meson configure "$dir" "$@" >/dev/null
fi
ninja -C "$dir" -j"$(nproc)"
