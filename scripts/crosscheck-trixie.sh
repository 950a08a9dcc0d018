#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Cross-check of the emulator with an independent driver: Debian 13's own DPDK 24.11 dpdk-testpmd
# with its own net_mana (librte-net-mana25), unmodified, on the emulator built in a Debian 13 chroot
# with g++ 14 and without our PMD (-Dpmd=false), on every emulator hardware profile.
#   scripts/crosscheck-trixie.sh            chroot (scripts/trixie-chroot.sh), build, emulator unit
#                                           tests, then the meson suite crosscheck-trixie
#   scripts/crosscheck-trixie.sh PROFILE..  only those profiles (by hand)
# Prints the time of each step. Builds into build-trixie/ (ignored, like build/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

step() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "crosscheck-trixie: $name took $((SECONDS - started)) s" >&2
}

step "chroot" scripts/trixie-chroot.sh >/dev/null
# Hugepages come from the host (the chroot sees its /dev/hugepages).
step "hugepages" scripts/hugepages.sh >/dev/null
step "build (g++ 14, -Dpmd=false)" scripts/trixie-chroot.sh run \
  env BUILD_DIR="$top/build-trixie" scripts/build.sh -Dpmd=false
step "unit tests (emulator, rdma-core 56)" scripts/trixie-chroot.sh run \
  meson test -C build-trixie --suite unit --print-errorlogs --num-processes 2
# The cost benchmark built against DPDK 24.11 (doc/performance.md "Three drivers, two DPDKs"):
# Debian 13's net_mana and net_null run in lockstep and report numbers (timings are not checked).
step "cost benchmark smoke (DPDK 24.11)" scripts/trixie-chroot.sh run sh -c \
  'exec build-trixie/app/mana_cost_bench --smoke --mana-emu build-trixie/emu/tool/mana-emu \
     --pmd dpdk-24.11="$(ls /usr/lib/*/dpdk/pmds-*/librte_net_mana.so)" --pmd null-24.11=vdev:net_null' \
  >/dev/null
if [ $# -gt 0 ]; then
  step "profiles $*" scripts/trixie-chroot.sh run \
    env MANA_PMD=system MANA_BUILD_DIR="$top/build-trixie" python3 tests/integration/test_system_net_mana.py "$@"
else
  # A build that lost the test would otherwise pass with "No suitable tests defined".
  scripts/trixie-chroot.sh run meson test -C build-trixie --list --suite crosscheck-trixie 2>/dev/null \
    | grep -q crosscheck-system-net-mana \
    || { echo "crosscheck-trixie: the build defines no test crosscheck-system-net-mana" >&2; exit 1; }
  step "DPDK 24.11 net_mana on every profile" scripts/trixie-chroot.sh run \
    meson test -C build-trixie --suite crosscheck-trixie --print-errorlogs
fi
