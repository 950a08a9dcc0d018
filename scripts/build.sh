#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configure (once) and build the project in BUILD_DIR (default: build). Extra meson options may be
# given as arguments, e.g. scripts/build.sh -Db_sanitize=address,undefined (with BUILD_DIR set).
# MANA_BUILD_SUITES="SUITE..." builds only what the tests of those meson suites need
# (scripts/suite-targets.py): CI's builds that run some suites only.
# scripts/build.sh --arch arm64 [--dpdk 24.11|22.11]: the arm64 build (doc/guide.md "Arm64"), with
# Debian's cross compiler against Debian 13's (or 12's) arm64 DPDK, in the cross chroot of
# scripts/debian-chroot.sh, into build-arm64-VERSION/ (scripts/test-arm64.sh VERSION build).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cross=()
if [ "${1:-}" = --arch ]; then
  [ "${2:-}" = arm64 ] || { echo "build: --arch: only arm64 is cross-built" >&2; exit 2; }
  shift 2
  if [ "${MANA_CROSS_CHROOT:-}" != arm64 ]; then  # on the host: into the chroot
    version=24.11
    [ "${1:-}" != --dpdk ] || { version=${2:?--dpdk needs 24.11 or 22.11}; shift 2; }
    [ $# = 0 ] || { echo "build: --arch arm64 takes no meson options (scripts/test-arm64.sh sets them)" >&2; exit 2; }
    exec "$top/scripts/test-arm64.sh" "$version" build
  fi
  cross=(--cross-file "$top/buildtools/cross/arm64-debian.ini")
fi
dir=${BUILD_DIR:-$top/build}
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$top" "${cross[@]}" "$@"
elif [ $# -gt 0 ]; then
  meson configure "$dir" "$@" >/dev/null
fi
# MANA_BUILD_TARGETS="TARGET..." builds those ninja targets alone (main-job: scripts/run-main.sh's).
read -r -a targets <<<"${MANA_BUILD_TARGETS:-}"
if [ -n "${MANA_BUILD_SUITES:-}" ]; then
  # shellcheck disable=SC2086 # a list of suite names
  mapfile -t targets < <("$top/scripts/suite-targets.py" "$dir" $MANA_BUILD_SUITES)
  [ ${#targets[@]} -gt 0 ] || { echo "build: no targets for suites $MANA_BUILD_SUITES" >&2; exit 1; }
fi
ninja -C "$dir" -j"$(nproc)" "${targets[@]}"
