#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark (doc/performance.md): Mpps and testpmd cycles/packet of net_mana on the emulator next to
# DPDK's own net_mana (scripts/build-upstream-mana.sh) and the net_null floor, for 64/512/1518-byte
# frames; writes doc/performance-results.md.
#   scripts/bench.sh [--pmd PATH] [--upstream PATH|none] [--sizes 64,512,1518] [--seconds 10]
#   scripts/bench.sh --dpdk 24.11|25.11 [--sizes ...] [--seconds ...]
#       the same in the chroot of scripts/test-dpdk.sh (Debian 13 / unstable): that distribution's
#       testpmd, ours built against its DPDK (build-dpdk-VERSION) and its own net_mana; writes
#       doc/performance-results-VERSION.md
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if [ "${1:-}" = --dpdk ]; then
  version=${2:?--dpdk needs 24.11 or 25.11}
  shift 2
  case "$version" in
    24.11) suite=trixie ;;
    25.11) suite=sid ;;
    *) echo "bench: error: --dpdk 24.11 or 25.11, not '$version'" >&2; exit 1 ;;
  esac
  scripts/test-dpdk.sh "$version" build >/dev/null
  root=$(scripts/debian-chroot.sh "$suite")
  theirs=$(cd "$root" && ls usr/lib/*/dpdk/pmds-*/librte_net_mana.so)
  exec scripts/debian-chroot.sh "$suite" run env MANA_BUILD_DIR="$top/build-dpdk-$version" \
    python3 app/bench/mana_bench.py --upstream "/$theirs" \
    --markdown "doc/performance-results-$version.md" "$@"
fi
scripts/setup.sh >/dev/null
BUILD_DIR=$top/build scripts/build.sh >/dev/null
exec /usr/bin/python3 app/bench/mana_bench.py --markdown doc/performance-results.md "$@"
