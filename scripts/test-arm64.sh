#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The driver and the emulator for arm64 (Azure's Cobalt VMs), cross-built and run under qemu-user
# (doc/guide.md "Arm64"): built with Debian's cross compiler against that release's arm64 DPDK and
# rdma-core in an amd64 chroot with arm64 as a foreign architecture (scripts/debian-chroot.sh
# RELEASE-cross-arm64), where binfmt_misc runs every arm64 program (the unit tests, Debian's arm64
# dpdk-testpmd with our arm64 driver on the arm64 emulator) under qemu-aarch64 and the integration
# harness runs natively.
#   scripts/test-arm64.sh [24.11|22.11] [--ci|build|TEST...]
# 24.11: Debian 13 (default); 22.11: Debian 12. --ci: CI's share (scripts/test.sh): the unit tests,
# the memory-ordering check of the compiled data path, the integration tests of `ci_tests`, and the
# Debian packages installed into a Debian 13 arm64 root where Azure's command line runs on them
# (24.11 only). TEST: meson test names instead; `build`: build only. Builds into build-arm64-VERSION/.
# Prints the time of each step.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "test-arm64: error: $*" >&2; exit 1; }

version=24.11
case "${1:-}" in
  24.11 | 22.11) version=$1; shift ;;
esac
case "$version" in
  24.11) suite=trixie-cross-arm64 ;;
  22.11) suite=bookworm-cross-arm64 ;;
esac
build=$top/build-arm64-$version
chroot_run() { scripts/debian-chroot.sh "$suite" run "$@"; }

step() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "test-arm64 $version: $name took $((SECONDS - started)) s" >&2
}

# CI's share under qemu (about 2 min): probe and load with the PMD info, forwarding on a pair wire
# with trapped doorbells, Azure's multi-queue (RSS) line and exact counts, VF removal and re-add
# with a secondary process forwarding before and after, and LISA's netvsc-mode testpmd lines (one
# and two processes, 8 TX / 4 RX queues, five VF hot-plugs). Each file's subset is named here (the
# harness's MANA_TESTS: a file none of whose tests is named fails). Of the unit tests, the driver's
# (suite pmd) and those of the CPU's own instructions (suite cpu: the doorbell trap and decoders);
# the emulator's other unit tests are the same code as on x86-64 (all of them without --ci).
ci_tests=(integration-load integration-forwarding integration-recovery integration-netvsc-testpmd)
ci_subset=(test_pmdinfo_reports_driver test_testpmd_loads_the_pmd
  test_io_pair_trap_doorbells test_azure_multi_queue_command_line test_pair_counters_match_exactly
  test_secondary_resumes_after_recovery
  test_send_receive_two_processes test_multi_queue_8_tx_4_rx test_hotplug_five_cycles)
# Tests of the host's suite that this stage leaves out, and why (printed on every run).
declare -A not_here=(
  [integration-upstream-crosscheck]="it builds DPDK 22.11's net_mana for x86-64 from Debian 12's source package"
  [integration-ovs]="Debian's Open vSwitch with DPDK is not in the cross chroot (its arm64 build needs arm64's Python)"
  [integration-rx-interrupts]="l3fwd-power is built from dpdk-doc's examples by the native compiler, not cross-built"
  [integration-netvsc]="its l3fwd tests build l3fwd from dpdk-doc's examples by the native compiler (its Azure-line and RETA tests passed under qemu on 2026-11-28)"
  [integration-install]="it builds and installs the native packages: the arm64 packages are installed into a Debian 13 arm64 root by scripts/arm64-install-check.sh instead"
  [integration-doctor]="mana-doctor is Python, which runs natively here and looks for the amd64 libmana; on an arm64 machine it finds arm64's"
)
ci=0
if [ "${1:-}" = --ci ]; then
  ci=1
  shift
fi

step "chroot ($suite)" scripts/debian-chroot.sh "$suite" >/dev/null
step "hugepages" scripts/hugepages.sh >/dev/null
# DPDK's driver-SDK headers are the same for every architecture: those of test-dpdk.sh for 24.11
# (from DPDK's source tarball), the host's for 22.11 (Debian 12's source package, scripts/setup.sh).
if [ "$version" = 24.11 ]; then
  sdk=$top/build-dpdk-24.11-sdk/include
  src=$(scripts/dpdk-source.sh 24.11 sdk)
  if [ ! -f "$sdk/../VERSION" ] || [ "$src" -nt "$sdk/../VERSION" ]; then
    step "driver-SDK headers from $src" scripts/fetch-dpdk-sdk.sh --from "$src" --dest "${sdk%/include}" >/dev/null
  fi
else
  arm_version=$(chroot_run pkg-config --modversion libdpdk)
  sdk=$top/.deps/dpdk-sdk/$arm_version/include
  [ -f "$sdk/ethdev_driver.h" ] || step "driver-SDK headers of DPDK $arm_version" scripts/fetch-dpdk-sdk.sh >/dev/null
  [ -f "$sdk/ethdev_driver.h" ] || die "no driver-SDK headers of DPDK $arm_version in $sdk"
fi
# --ci builds what its share runs (not the benchmarks); the whole tree otherwise.
suites=""
[ $ci = 0 ] || suites="pmd cpu integration arm64"
step "build (aarch64-linux-gnu-g++, Debian's arm64 DPDK $version)" chroot_run \
  env BUILD_DIR="$build" MANA_BUILD_SUITES="$suites" scripts/build.sh --arch arm64 -Ddpdk_sdk_dir="$sdk"
[ "${1:-}" != build ] || exit 0
if [ $# -gt 0 ]; then
  step "$*" chroot_run meson test -C "$build" --no-rebuild --print-errorlogs "$@"
  exit
fi

# The fuzz tests take a tenth of their steps: qemu runs them some 10 times slower.
unit=(--suite unit)
[ $ci = 0 ] || unit=(--suite pmd --suite cpu)
step "unit tests (qemu-aarch64)" chroot_run env MANA_FUZZ_SCALE=0.1 meson test -C "$build" "${unit[@]}" \
  --no-rebuild --print-errorlogs --num-processes 2
step "memory ordering of the arm64 data path" chroot_run meson test -C "$build" --suite arm64 \
  --no-rebuild --print-errorlogs
if [ $ci = 1 ]; then
  subset=$(IFS=,; echo "${ci_subset[*]}")
  step "integration share (qemu-aarch64)" chroot_run env MANA_TESTS="$subset" meson test -C "$build" \
    --no-rebuild --print-errorlogs "${ci_tests[@]}"
else
  mapfile -t all < <(chroot_run meson test -C "$build" --no-rebuild --list --suite integration --suite system-net-mana 2>/dev/null \
    | grep 'mana-pmd:' | sed -E 's/.* \/ //; s/.*mana-pmd://')
  run=()
  for t in "${all[@]}"; do
    if [ -n "${not_here[$t]:-}" ]; then
      echo "test-arm64 $version: not in this stage: $t: ${not_here[$t]}" >&2
    else
      run+=("$t")
    fi
  done
  [ ${#run[@]} -gt 0 ] || die "no integration tests to run in $build"
  step "integration suite (qemu-aarch64)" chroot_run meson test -C "$build" --no-rebuild \
    --print-errorlogs "${run[@]}"
fi
[ "$version" = 24.11 ] || exit 0
step "Debian packages (dpkg-buildpackage -a arm64)" chroot_run scripts/build-deb.sh --arch arm64 \
  --sdk "$sdk" "$top/build-deb-arm64-$version" >/dev/null
step "the packages on a Debian 13 arm64 root" scripts/arm64-install-check.sh "$top/build-deb-arm64-$version"
