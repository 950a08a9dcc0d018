#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark (doc/performance.md): Mpps and testpmd cycles/packet of net_mana on the emulator next to
# DPDK's own net_mana (scripts/build-upstream-mana.sh) and the net_null floor, for 64/512/1518-byte
# frames; writes doc/performance-results.md.
#   scripts/bench.sh [--pmd PATH] [--upstream PATH|none] [--sizes 64,512,1518] [--seconds 10]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/setup.sh >/dev/null
BUILD_DIR=$top/build scripts/build.sh >/dev/null
exec /usr/bin/python3 app/bench/mana_bench.py --markdown doc/performance-results.md "$@"
