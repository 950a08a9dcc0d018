#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per packet inside net_mana's burst functions (doc/performance.md): build/app/burst_icount
# (io forwarding against a fake NIC, one thread) under callgrind, collecting only inside rx_burst,
# then only inside tx_burst (each inclusive of what it calls: mbuf allocation and freeing).
# Instruction counts are repeatable for the same binary: use them to catch regressions.
#   scripts/bench-icount.sh [rounds] [burst] [tx_rs_thresh tx_free_thresh [fast-free]]
#   (defaults 2000, 32 and the driver's default thresholds; the rest goes to burst_icount)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
rounds=${1:-2000}
burst=${2:-32}
shift $(($# < 2 ? $# : 2))
command -v valgrind >/dev/null || { echo "bench-icount: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
BUILD_DIR=$top/build scripts/build.sh >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
packets=$((rounds * burst))
for fn in rx_burst tx_burst; do
  valgrind --tool=callgrind --callgrind-out-file="$out/$fn" --collect-atstart=no \
    --toggle-collect="*mana::*${fn}<*" build/app/burst_icount "$rounds" "$burst" "$@" >/dev/null 2>&1
  ir=$(sed -n 's/^totals: *//p' "$out/$fn")
  awk -v f="$fn" -v ir="$ir" -v n="$packets" -v b="$burst" \
    'BEGIN { printf "%-9s %8.1f instructions/packet (%d instructions, %d packets, burst %d)\n", f, ir / n, ir, n, b }'
done
