#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# All tests, as CI runs them, on a fresh Debian 12 machine (as root): setup, build, lint
# (clang-format drift, clang-tidy: scripts/lint.sh), every unit and
# integration test, the unit tests again in a sanitizer build (address, undefined), the emulator's
# concurrent parts under ThreadSanitizer, then the cross-check with Debian 13's own DPDK 24.11
# net_mana in a Debian 13 chroot.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/setup.sh

BUILD_DIR=$top/build scripts/build.sh
# Formatting drift and clang-tidy (.clang-tidy) on our sources: about 1.5 min on 2 cores.
BUILD_DIR=$top/build scripts/lint.sh
meson test -C build --print-errorlogs --num-processes 2

# The sanitizer build runs the unit tests (the integration tests load our PMD into Debian's
# uninstrumented testpmd, which ASan cannot follow).
BUILD_DIR=$top/build-asan scripts/build.sh -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
# verify_asan_link_order=0: the emulator's LD_PRELOAD library is instrumented too and is preloaded
# into test programs that load the ASan runtime themselves.
ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --suite unit --print-errorlogs --num-processes 2

# ThreadSanitizer over the emulator's concurrent parts (device thread, doorbell FIFO and queue,
# control server, wires): the unit tests of meson suite `tsan`. -Dpmd=false: the driver only runs
# inside Debian's uninstrumented DPDK, so it is left out (and the build stays short).
BUILD_DIR=$top/build-tsan scripts/build.sh -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug -Dpmd=false
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  meson test -C build-tsan --suite tsan --print-errorlogs --num-processes 2

# An independent driver on the emulator: Debian 13's DPDK 24.11 and its net_mana, in a chroot.
scripts/crosscheck-trixie.sh
