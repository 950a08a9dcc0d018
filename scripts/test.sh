#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# All tests, as CI runs them, on a fresh Debian 12 machine (as root): setup, build, lint
# (clang-format drift, clang-tidy: scripts/lint.sh), every integration test and benchmark smoke,
# every unit test in a sanitizer build (address, undefined), the emulator's and the driver's
# concurrent parts under ThreadSanitizer, then the driver on DPDK 24.11 in a Debian
# 13 chroot with Debian 13's programs and its own net_mana beside ours (scripts/test-dpdk.sh 24.11
# --ci: CI's share of the integration suite there), on DPDK 23.11 and 26.07 built from source in a
# Debian 12 chroot and on 25.11 in a Debian unstable chroot (scripts/test-dpdk.sh VERSION --ci:
# their smoke share), DPDK 26.07's own conformance suites (DTS) against ours (scripts/test-dts.sh
# --ci: its fastest suites), and on arm64 under qemu-user (scripts/test-arm64.sh --ci).
#   scripts/test.sh         what CI runs (.ci/run)
#   scripts/test.sh --all   the whole integration suite on DPDK 23.11, 24.11, 25.11 and 26.07 and
#                           every DTS suite, which CI's time limit leaves out (doc/testing.md)
# Every stage runs even when an earlier one failed (a failure must not hide whether the later
# stages pass); the summary at the end names each stage's result, and the exit status is 1 when
# any failed. Setup and the main build are the exception: nothing can run without them.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
all=0
case "${1:-}" in
  "") ;;
  --all) all=1 ;;
  *) echo "test.sh: unknown argument '$1' (usage: $0 [--all])" >&2; exit 2 ;;
esac
scripts/setup.sh || { echo "test.sh: setup failed: nothing can run" >&2; exit 1; }
# Every native build compiles through ccache (setup.sh installs it; meson uses it when it finds it),
# its cache kept with the project's other caches: a second run on a machine compiles only what
# changed. The build folder's path is left out of the key (the unity sources name the sources by
# absolute path, so a checkout elsewhere misses anyway); the chroots keep their own cache.
export CCACHE_DIR=/var/cache/mana-pmd/ccache CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=2G
# The same for clang-tidy (scripts/lint.sh): a file is checked again once something it includes
# changed; the clean runs are kept beside ccache's cache.
export MANA_TIDY_CACHE=/var/cache/mana-pmd/clang-tidy
# The Debian 13, 12 and unstable chroots (debootstrap and apt: network and disk, little CPU) are
# made meanwhile, in the background, one after the other (each may install debootstrap on the
# host), then the arm64 stage's cross chroot (Debian 13 amd64 with arm64 libraries); the stages
# that use them wait for them. The arm64 stage makes its Debian 13 arm64 root itself, once per
# machine: its apt runs under qemu (about 8 min of one core), which would load the stages before.
# The job runs at the lowest CPU priority (nice 19): the integration stage beside it compares packet
# rates before and after a VF removal, and apt at equal priority in a chroot cost a recovery test
# 20 % of its rate between its baseline and its first cycle (2026-12-07).
chroot_log=${TMPDIR:-/tmp}/mana-test-debian-chroots.log
{ renice -n 19 $BASHPID >/dev/null; scripts/debian-chroot.sh trixie && scripts/debian-chroot.sh bookworm && scripts/debian-chroot.sh sid &&
  scripts/debian-chroot.sh trixie-cross-arm64; } >"$chroot_log" 2>&1 &
chroots=$!
# The main build compiles what its stage runs, the integration and benchmark suites (the driver, the
# emulator, the tools): the unit tests are compiled and run in the sanitizer build below, and on
# DPDK 24.11 in an optimized build, so the main build leaves out their half of the compile time.
MANA_BUILD_SUITES="integration bench" BUILD_DIR=$top/build scripts/build.sh ||
  { kill $chroots 2>/dev/null; echo "test.sh: the build failed: nothing can run" >&2; exit 1; }

results=()
failed=0
# stage NAME COMMAND...: runs one stage, keeps its result and time for the summary.
stage() {
  local name=$1 started rc
  shift
  echo "=== test.sh: $name"
  started=$(date +%s)
  "$@"
  rc=$?
  results+=("$(printf '%-52s %s (%d s)' "$name" "$([ $rc = 0 ] && echo passed || echo "FAILED, status $rc")" \
    $(($(date +%s) - started)))")
  [ $rc = 0 ] || failed=1
}

# Formatting drift and clang-tidy (.clang-tidy) on our sources: about 2.5 min on 2 cores, under
# 20 s when no source changed since the last clean run (MANA_TIDY_CACHE).
stage "lint (clang-format, clang-tidy)" env BUILD_DIR="$top/build" scripts/lint.sh
stage "meson test (integration, bench)" meson test -C build --suite integration --suite bench --no-rebuild \
  --print-errorlogs --num-processes 2

# The sanitizer build runs the unit tests (the integration tests load our PMD into Debian's
# uninstrumented testpmd, which ASan cannot follow): every unit test runs here, with address and
# undefined-behaviour checks (the DPDK 24.11 stage runs the driver's in an optimized build).
# The fuzz tests walk a quarter of their steps here (MANA_FUZZ_SCALE=0.25), every step still checked
# by ASan: whole, the RX completion fuzz took 27 s alone and over 60 s (its timeout) beside another
# test on this 2-core machine (2026-12-07); the DPDK stages run the whole walks, optimized.
# verify_asan_link_order=0: the emulator's LD_PRELOAD library is instrumented too and is preloaded
# into test programs that load the ASan runtime themselves.
asan() {
  BUILD_DIR=$top/build-asan scripts/build.sh -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debug || return
  ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    MANA_FUZZ_SCALE=0.25 meson test -C build-asan --suite unit --print-errorlogs --num-processes 2
}
stage "unit tests (ASan/UBSan build)" asan

# ThreadSanitizer over the concurrent parts: the emulator's (device thread, doorbell FIFO and queue,
# control server, wires) and the driver's (queue gate, kept queues, the lock-free MR table), the
# unit tests of meson suite `tsan`. The driver's tests run its code in the test program (DPDK's
# libraries are not instrumented: only our side of each race is seen).
# Only what suite `tsan` needs is compiled (scripts/suite-targets.py): about half of the tree.
tsan() {
  [ -f build-tsan/build.ninja ] ||
    meson setup build-tsan . -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug || return
  ninja -C build-tsan $(scripts/suite-targets.py build-tsan tsan) || return
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    meson test -C build-tsan --suite tsan --no-rebuild --print-errorlogs --num-processes 2
}
stage "TSan tests" tsan

# The driver on DPDK 24.11 (Debian 13 chroot): its unit tests, the cost benchmark's smoke, CI's
# share of the integration suite with Debian 13's programs (test-dpdk.sh --ci; the whole suite ran
# on 22.11 above), and Debian 13's own net_mana on the default emulator profile (the independent
# driver; every profile with --all). --all: the whole suite on every DPDK.
# The background chroot first (its failure is this stage's: the log says why).
dpdk_24_11() {
  wait $chroots || { tail -20 "$chroot_log" >&2; return 1; }
  scripts/test-dpdk.sh 24.11 "$@"
}
# DPDK 23.11 (Ubuntu 24.04's, RHEL 9's) and 26.07 (the newest release), each built from source
# once per machine (scripts/build-dpdk.sh, cached) in the Debian 12 chroot: ours built against it
# and its smoke share (--ci), or the whole suite (--all), with its own net_mana beside ours.
if [ $all = 1 ]; then
  stage "DPDK 24.11 (Debian 13 chroot, scripts/test-dpdk.sh)" dpdk_24_11
  stage "DPDK 23.11 (from source, scripts/test-dpdk.sh)" scripts/test-dpdk.sh 23.11
  stage "DPDK 26.07 (from source, scripts/test-dpdk.sh)" scripts/test-dpdk.sh 26.07
  stage "DPDK 25.11 (Debian unstable chroot, scripts/test-dpdk.sh)" scripts/test-dpdk.sh 25.11
else
  stage "DPDK 24.11 (Debian 13 chroot, scripts/test-dpdk.sh --ci)" dpdk_24_11 --ci
  stage "DPDK 23.11 (from source, scripts/test-dpdk.sh --ci)" scripts/test-dpdk.sh 23.11 --ci
  stage "DPDK 26.07 (from source, scripts/test-dpdk.sh --ci)" scripts/test-dpdk.sh 26.07 --ci
  stage "DPDK 25.11 (Debian unstable chroot, scripts/test-dpdk.sh --ci)" scripts/test-dpdk.sh 25.11 --ci
fi

# DPDK 26.07's DTS (its functional suites) against ours, in the Debian 13 chroot, on the build the
# DPDK 26.07 stage made (scripts/test-dts.sh; it installs DTS's Python libraries there once per
# machine). CI runs the suites that take seconds (--ci); --all every one that applies.
dts() {
  wait $chroots 2>/dev/null  # (the DPDK 24.11 stage may have waited for it already)
  scripts/test-dts.sh "$@"
}
if [ $all = 1 ]; then
  stage "DTS (DPDK 26.07, scripts/test-dts.sh)" dts
else
  stage "DTS (DPDK 26.07, scripts/test-dts.sh --ci)" dts --ci
fi

# arm64 (Azure's Cobalt VMs): the driver and the emulator cross-built against Debian 13's arm64
# DPDK, their unit tests, the memory-ordering check of the compiled data path and a forwarding,
# secondary, removal and netvsc share under qemu-user, then the arm64 packages installed into a
# Debian 13 arm64 root where Azure's line runs (scripts/test-arm64.sh; --all: its whole suite).
arm64() {
  wait $chroots 2>/dev/null  # (the DPDK 24.11 stage may have waited for it already)
  scripts/debian-chroot.sh trixie-arm64 >/dev/null || return 1
  scripts/test-arm64.sh 24.11 "$@"
}
if [ $all = 1 ]; then
  stage "arm64 (DPDK 24.11, qemu-user, scripts/test-arm64.sh)" arm64
else
  stage "arm64 (DPDK 24.11, qemu-user, scripts/test-arm64.sh --ci)" arm64 --ci
fi

echo "=== test.sh: summary"
printf '%s\n' "${results[@]}"
exit $failed
