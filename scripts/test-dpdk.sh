#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The driver on another DPDK, with that distribution's own programs (doc/guide.md "Other DPDK
# versions"): our PMD and the emulator built in a chroot of the distribution that ships the DPDK,
# then the unit tests, the integration suite (its dpdk-testpmd, dpdk-proc-info, dpdk-dumpcap,
# l3fwd from its dpdk-doc, Open vSwitch) and the distribution's own net_mana on every emulator
# profile (suite system-net-mana: the independent driver, beside ours in the same run).
#   scripts/test-dpdk.sh 24.11 [--ci|TEST...]   Debian 13 (trixie, DPDK 24.11.x)
#   scripts/test-dpdk.sh 25.11 [--ci|TEST...]   Debian unstable (sid, DPDK 25.11.x)
# --ci: CI's share (scripts/test.sh): the same steps with the integration tests of `ci_tests` below
# (the rest of the suite runs on 22.11 in the same CI run; README "Building" has the times).
# TEST: meson test names (e.g. integration-forwarding) instead of the whole run; `build`: build only.
# DPDK's driver-SDK headers come from MANA_DPDK_SRC: a DPDK source tree or release tarball of that
# version (default ../shared/dpdk/dpdk-VERSION-sdk-src.tar.xz beside this checkout). Builds into
# build-dpdk-VERSION/ (ignored, like build/). Prints the time of each step.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "test-dpdk: error: $*" >&2; exit 1; }

version=${1:-}
case "$version" in
  24.11) suite=trixie ;;
  25.11) suite=sid ;;
  *) die "usage: $0 24.11|25.11 [TEST...] (22.11 is the host's: scripts/test.sh)" ;;
esac
shift
build=$top/build-dpdk-$version
sdk=$top/build-dpdk-$version-sdk
src=${MANA_DPDK_SRC:-$top/../shared/dpdk/dpdk-$version-sdk-src.tar.xz}
chroot_run() { scripts/debian-chroot.sh "$suite" run "$@"; }

step() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "test-dpdk $version: $name took $((SECONDS - started)) s" >&2
}

# Tests of the host's suite that are not in this stage, and why (printed on every run).
declare -A not_here=(
  [integration-upstream-crosscheck]="it builds DPDK 22.11's net_mana from Debian 12's source package; here the distribution's own net_mana is the independent driver (suite system-net-mana)"
)

# CI's share of the integration suite: what touches DPDK's driver interface most (probe and
# devargs, the data path and its counters, per-queue and extended stats, secondaries, queue state
# and control ops, the port's life), Open vSwitch of that distribution, LISA's netvsc-mode
# testpmd lines (which only a testpmd of DPDK >= 23.11 forwards: 35 s) and servicing under
# net_netvsc around MTU changes, port start and stop (20 s), in about 3 min.
ci_tests=(integration-load integration-forwarding integration-tap integration-lifecycle
  integration-multiprocess integration-queue-control integration-ethdev-ops integration-port-config
  integration-ovs crosscheck-system-net-mana integration-netvsc-testpmd integration-netvsc-servicing)
ci=0
if [ "${1:-}" = --ci ]; then
  ci=1
  shift
fi

step "chroot ($suite)" scripts/debian-chroot.sh "$suite" >/dev/null
# Hugepages come from the host (the chroot sees its /dev/hugepages).
step "hugepages" scripts/hugepages.sh >/dev/null
# On the host: the chroot does not see ../shared. Redone only when the source is newer.
if [ ! -f "$sdk/VERSION" ] || [ "$src" -nt "$sdk/VERSION" ]; then
  [ -e "$src" ] || die "no DPDK $version source at $src: set MANA_DPDK_SRC to DPDK $version's source tree or release tarball"
  step "driver-SDK headers from $src" scripts/fetch-dpdk-sdk.sh --from "$src" --dest "$sdk" >/dev/null
fi
# --ci builds what CI's share runs: the driver's unit tests (suite pmd: the ones DPDK's version
# reaches), the integration suite and the benchmark; the whole tree otherwise.
suites=""
[ $ci = 0 ] || suites="pmd integration system-net-mana bench"
step "build (the distribution's g++, DPDK $version)" chroot_run \
  env BUILD_DIR="$build" MANA_BUILD_SUITES="$suites" scripts/build.sh -Ddpdk_sdk_dir="$sdk/include"

# The harness's l3fwd builds (scripts/build-dpdk-example.sh) go into this build folder, not .deps.
test_env=(env MANA_EXAMPLES_DIR="$build/dpdk-examples")
[ "${1:-}" != build ] || exit 0
if [ $# -gt 0 ]; then
  step "$*" chroot_run "${test_env[@]}" meson test -C "$build" --print-errorlogs "$@"
  exit
fi

step "unit tests" chroot_run meson test -C "$build" --suite "$([ $ci = 1 ] && echo pmd || echo unit)" --no-rebuild \
  --print-errorlogs --num-processes 2
# The cost benchmark built against this DPDK: ours, the distribution's net_mana and net_null in
# lockstep report numbers (timings are not checked here; doc/performance.md).
step "cost benchmark smoke" chroot_run sh -c \
  'exec "$0"/app/mana_cost_bench --smoke --mana-emu "$0"/emu/tool/mana-emu \
     --pmd ours="$0"/drivers/net/mana/librte_net_mana.so \
     --pmd dpdk="$(ls /usr/lib/*/dpdk/pmds-*/librte_net_mana.so)" --pmd null=vdev:net_null' "$build" >/dev/null

mapfile -t all < <(chroot_run meson test -C "$build" --no-rebuild --list --suite integration --suite system-net-mana 2>/dev/null \
  | grep 'mana-pmd:' | sed -E 's/.* \/ //; s/.*mana-pmd://')  # (meson 1.7: "mana-pmd:SUITE / NAME", 1.12: "SUITE - mana-pmd:NAME")
# A build that lost the independent driver's test would otherwise pass without it.
printf '%s\n' "${all[@]}" | grep -qx crosscheck-system-net-mana \
  || die "the build defines no test crosscheck-system-net-mana"
run=()
for t in "${all[@]}"; do
  if [ $ci = 1 ] && ! printf '%s\n' "${ci_tests[@]}" | grep -qx -- "$t"; then
    continue
  elif [ -n "${not_here[$t]:-}" ]; then
    echo "test-dpdk $version: not in this stage: $t: ${not_here[$t]}" >&2
  else
    run+=("$t")
  fi
done
step "integration suite and DPDK $version's net_mana (${#run[@]} tests)" chroot_run "${test_env[@]}" \
  meson test -C "$build" --no-rebuild --print-errorlogs "${run[@]}"
