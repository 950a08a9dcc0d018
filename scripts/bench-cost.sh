#!/usr/bin/env bash
# Cost per packet of two MANA PMDs' burst functions on the emulator in lockstep mode
# (doc/performance.md "Cost per packet"): ours (build/drivers/net/mana) and DPDK's own net_mana
# (scripts/build-upstream-mana.sh), measured alternately in one run of build/app/mana_cost_bench.
#   scripts/bench-cost.sh [mana_cost_bench options]     TSC cycles/packet, median (min-max) of rounds
#   scripts/bench-cost.sh --smoke                       CI: both drivers run (no timing checked)
#   scripts/bench-cost.sh --callgrind [packets]         instructions/packet per burst function
#                                                       (valgrind), 64/512/1518 B, burst 32 and 8,
#                                                       offloads off and on
# BUILD_DIR (default build) is built first unless MANA_BENCH_NO_BUILD=1 (the meson test).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
die() { echo "bench-cost: error: $*" >&2; exit 1; }
[ "${MANA_BENCH_NO_BUILD:-0}" = 1 ] || BUILD_DIR=$build "$top/scripts/build.sh" >/dev/null
ours=$build/drivers/net/mana/librte_net_mana.so
upstream=$("$top/scripts/build-upstream-mana.sh" | tail -n 1)
bench=$build/app/mana_cost_bench
emu=$build/emu/tool/mana-emu
for f in "$ours" "$upstream" "$bench" "$emu"; do [ -e "$f" ] || die "$f is missing"; done

# DPDK's EAL refuses plugins below a world-writable folder (a clone under /tmp): private copies.
work=$(mktemp -d "${TMPDIR:-/tmp}/mana-bench-cost.XXXXXX")
trap 'rm -rf "$work"' EXIT
loadable() {
  local d
  d=$(dirname "$(realpath "$1")")
  while [ "$d" != / ]; do
    if [ -n "$(find "$d" -maxdepth 0 -perm -0002)" ]; then
      local safe=/run/mana-bench-cost-$$
      mkdir -p -m 0755 "$safe" && cp "$1" "$safe/" || die "cannot copy $1 to $safe"
      echo "$safe/$(basename "$1")"
      return
    fi
    d=$(dirname "$d")
  done
  echo "$1"
}
ours=$(loadable "$ours")
upstream=$(loadable "$upstream")
trap 'rm -rf "$work" /run/mana-bench-cost-$$' EXIT

if [ "${1:-}" != --callgrind ]; then
  exec_args=(--pmd "ours=$ours" --pmd "dpdk=$upstream" --mana-emu "$emu" "$@")
  "$bench" "${exec_args[@]}" 2> >(grep -v -e '^mana_init_once' -e '^mana_mr_btree_init' >&2)
  exit $?
fi

# Callgrind: one child per driver, configuration and burst function, collecting only inside
# bench_rx (rte_eth_rx_burst) or bench_tx (rte_eth_tx_prepare + rte_eth_tx_burst), inclusive of
# what they call; instructions over the packets that went through them (warm-up included).
command -v valgrind >/dev/null || die "valgrind is needed (apt-get install valgrind)"
packets=${2:-20000}
printf '| frame | burst | offloads | driver | rx_burst instructions/pkt | tx_burst instructions/pkt |\n'
printf '|---|---|---|---|---|---|\n'
for size in 64 512 1518; do
  for burst in 32 8; do
    for offloads in off on; do
      for driver in ours dpdk; do
        [ $driver = ours ] && pmd=$ours || pmd=$upstream
        cells=()
        for fn in bench_rx bench_tx; do
          out=$("$emu" run --lockstep --doorbell poll -- valgrind --tool=callgrind \
            --callgrind-out-file="$work/$fn" --collect-atstart=no --toggle-collect="$fn" \
            "$bench" --round --pmd "$pmd" --size $size --burst $burst --offloads $offloads \
            --packets "$packets" --file-prefix "mana-cost-cg-$$" 2>"$work/stderr") \
            || { cat "$work/stderr" >&2; die "$driver $size B burst $burst offloads $offloads failed"; }
          if [[ $out == n/a* ]]; then
            cells+=("${out}")
            continue
          fi
          all=$(awk '/^result/ { print $5 }' <<<"$out")
          ir=$(sed -n 's/^totals: *//p' "$work/$fn")
          cells+=("$(awk -v ir="$ir" -v n="$all" 'BEGIN { printf "%.1f", ir / n }')")
        done
        printf '| %s B | %s | %s | %s | %s | %s |\n' $size $burst $offloads $driver "${cells[0]}" "${cells[1]}"
      done
    done
  done
done
