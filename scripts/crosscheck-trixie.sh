#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Cross-check of the emulator with an independent driver: Debian 13's own DPDK 24.11 dpdk-testpmd
# with its own net_mana (librte-net-mana25), unmodified, on the emulator built in the Debian 13
# chroot, on every emulator hardware profile. It is part of scripts/test-dpdk.sh 24.11 (the test
# crosscheck-system-net-mana, beside our PMD built against 24.11, in build-dpdk-24.11/).
#   scripts/crosscheck-trixie.sh            that test alone (chroot and build as test-dpdk.sh makes them)
#   scripts/crosscheck-trixie.sh PROFILE..  only those profiles (by hand)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if [ $# = 0 ]; then
  exec scripts/test-dpdk.sh 24.11 crosscheck-system-net-mana
else
  scripts/test-dpdk.sh 24.11 build
  exec scripts/trixie-chroot.sh run env MANA_PMD=system MANA_BUILD_DIR="$top/build-dpdk-24.11" \
    python3 tests/integration/test_system_net_mana.py "$@"
fi
