#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Cost per packet of MANA PMDs' burst functions on the emulator in lockstep mode
# (doc/performance.md "Cost per packet"): ours (build/drivers/net/mana) and DPDK's own net_mana
# (scripts/build-upstream-mana.sh), measured alternately in one run of build/app/mana_cost_bench.
#   scripts/bench-cost.sh [mana_cost_bench options]     TSC cycles/packet, median (min-max) of rounds
#   scripts/bench-cost.sh --smoke                       CI: both drivers run (no timing checked)
#   scripts/bench-cost.sh --callgrind [packets] [--sizes L] [--bursts L]
#                                                       instructions/packet per burst function
#                                                       (valgrind), 64/512/1518 B, burst 32 and 8,
#                                                       offloads off and on
#   scripts/bench-cost.sh --callgrind [packets] --ptypes none   the application asks for no packet
#                                                       types, as testpmd does (default: all)
#   scripts/bench-cost.sh [--callgrind [packets]] --fast-free on   TX queues with MBUF_FAST_FREE
#                                                       where the driver offers it, as testpmd
#                                                       asks (default: off)
#   scripts/bench-cost.sh [--callgrind [packets]] --prepare off|apart   rte_eth_tx_burst alone:
#                                                       without rte_eth_tx_prepare (off), or on
#                                                       packets it prepared outside the measured
#                                                       call (apart); default: on, both measured
#   scripts/bench-cost.sh --callgrind [packets] --split  and a second table: each function's
#                                                       instructions/packet by where they ran (the
#                                                       driver's object, DPDK's libraries, the
#                                                       benchmark with the inlined ethdev dispatch)
#   scripts/bench-cost.sh --dpdk 23.11|24.11|25.11|26.07 [any of the above]
#       drivers of two DPDKs in one table ("Drivers per DPDK version"): ours and DPDK 22.11's
#       net_mana here, and in the chroot of scripts/test-dpdk.sh (Debian 13 for 24.11, unstable
#       for 25.11, Debian 12 with DPDK built from source for 23.11 and 26.07) ours built against
#       that DPDK and that DPDK's own net_mana, with DPDK's
#       net_null under each DPDK (the driver-independent floor), rounds alternating across all of
#       them (mana_cost_bench, the emulator and our PMD built there in build-dpdk-VERSION)
#   scripts/bench-cost.sh --trixie [...]                 the same as --dpdk 24.11
#   scripts/bench-cost.sh --arm64 [any of the above]    arm64 alone: ours, Debian 13's arm64
#       net_mana and net_null, built and run in the cross chroot (scripts/test-arm64.sh) under
#       qemu-user; --callgrind counts arm64 instructions (valgrind's arm64 tool under qemu: exact
#       and repeatable, as on x86; TSC cycles under qemu say nothing of an Arm CPU)
#   scripts/bench-cost.sh [--callgrind [packets]] --queues 1,2,4,8,16 [--ports 2]
#       N RX and N TX queues per port, RSS spreading the frames (each TX queue's UDP source port
#       hashes to the RX queue of its index; a frame elsewhere fails the round), on one or both
#       ports of the emulated VF; a step sends a burst on every TX queue of every port
#       (doc/performance.md "Scaling with queues and ports")
#   scripts/bench-cost.sh --callgrind [packets] --cache-sim   callgrind's cache simulation beside
#       each count: "(R+W)", the reads and writes per packet that miss a 32 KiB L1 and a 512 KiB
#       second level (this machine's per-core L2; callgrind simulates two levels), device model's
#       accesses included (doc/performance.md "Scaling with queues and ports")
#   scripts/bench-cost.sh [--callgrind [packets]] --ring 64|128|256   descriptors per RX and TX
#       ring (default 256): with --queues, how many mbufs are in flight on the core
#   scripts/bench-cost.sh --callgrind [packets] --drivers ours[,dpdk]   only those drivers' rows
#   scripts/bench-cost.sh [--callgrind [packets]] --simd-bitwidth 64|128|256|512   each round's EAL
#                                                       with --force-max-simd-bitwidth: 128 runs
#                                                       ours on SSE4.1 rather than AVX2, 64 on the
#                                                       scalar RX path (default: the EAL's, 256)
#   scripts/bench-cost.sh --compare [--packets N] [--rounds N] [--tsc-packets N] [TX options]
#       one table against the targets: RX and TX with offloads off and on, 64 B, burst 32; ours,
#       DPDK 22.11's net_mana and net_null; instructions/packet in the driver's object (callgrind,
#       --split, 20000 packets) and TSC cycles/packet (median of 5 rounds of 100000), the ratios
#       ours/DPDK and each target met or missed (about 3 minutes on 2 cores)
# BUILD_DIR (default build) is built first unless MANA_BENCH_NO_BUILD=1 (the meson test).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
die() { echo "bench-cost: error: $*" >&2; exit 1; }
chroot_of() {
  case "$1" in
    23.11 | 26.07) echo bookworm ;; 24.11) echo trixie ;; 25.11) echo sid ;; arm64) echo trixie-cross-arm64 ;;
    *) die "--dpdk 23.11, 24.11, 25.11 or 26.07, not '$1'" ;;
  esac
}
# Internal: mana_cost_bench --via runs a chroot round as `bench-cost.sh --chroot-round VERSION --round ...`.
build_of() { [ "$1" = arm64 ] && echo "$top/build-arm64-24.11" || echo "$top/build-dpdk-$1"; }
if [ "${1:-}" = --chroot-round ]; then
  tbuild=$(build_of "$2")
  suite=$(chroot_of "$2")
  shift 2
  nports=1
  args=("$@")
  for i in "${!args[@]}"; do [ "${args[$i]}" != --ports ] || nports=${args[$((i + 1))]}; done
  exec "$top/scripts/debian-chroot.sh" "$suite" run "$tbuild/emu/tool/mana-emu" run --lockstep --doorbell poll \
    --ports "$nports" -- "$tbuild/app/mana_cost_bench" "$@"
fi
if [ "${1:-}" = --compare ]; then
  # One table against the targets (doc/performance.md "How to reproduce"): instructions/packet
  # under callgrind (--split: the driver's own object) and TSC cycles/packet, 64 B, burst 32, RX
  # and TX with offloads off and on, ours, DPDK 22.11's net_mana and net_null.
  shift
  cg_packets=20000 rounds=5 tsc_packets=100000
  pass=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --packets) cg_packets=$2 ;;
      --rounds) rounds=$2 ;;
      --tsc-packets) tsc_packets=$2 ;;
      --ptypes | --fast-free | --prepare | --simd-bitwidth | --ring) pass+=("$1" "$2") ;;
      *) die "--compare: unknown option $1 (--packets N, --rounds N, --tsc-packets N, --ptypes, --fast-free, --prepare, --simd-bitwidth, --ring)" ;;
    esac
    shift 2 || die "--compare: $1 needs a value"
  done
  [ "${MANA_BENCH_NO_BUILD:-0}" = 1 ] || BUILD_DIR=$build "$top/scripts/build.sh" >/dev/null
  export MANA_BENCH_NO_BUILD=1 MANA_BENCH_WITH_NULL=1
  started=$(date +%s)
  cg=$("$0" --callgrind "$cg_packets" --sizes 64 --bursts 32 --split "${pass[@]}") || die "the callgrind runs failed"
  tsc=$("$0" --rounds "$rounds" --packets "$tsc_packets" --sizes 64 --bursts 32 "${pass[@]}") || die "the TSC runs failed"
  echo "64 B, burst 32, $(date -u +%Y-%m-%d); instructions/packet: callgrind, $cg_packets packets, in the"
  echo "driver's own object (all: with DPDK's libraries and the ethdev dispatch); cycles/packet: TSC,"
  echo "median of $rounds rounds of $tsc_packets packets, the drivers alternating.${pass[*]:+ Options: ${pass[*]}.}"
  echo "Targets: ours at most 35 (RX), 50 (TX, offloads off), 60 (TX, offloads on) instructions/packet"
  echo "in its object, and at most 0.25x of DPDK 22.11's net_mana's cycles/packet."
  echo
  {
    sed -n 's/^| 64 B | 32 | \(o[nf]*\) | \([a-z0-9.-]*\) | bench_\(rx\|tx\) | \([0-9.]*\) | \([0-9.]*\) .*/cg \1 \2 \3 \4 \5/p' <<<"$cg"
    sed -n 's/^| 64 B | 32 | \(o[nf]*\) | \([a-z0-9.-]*\) | \([0-9.]*\) [^|]*| \([0-9.]*\) .*/tsc \1 \2 \3 \4/p' <<<"$tsc"
  } | awk '
    $1 == "cg" { all[$4 " " $2, $3] = $5; own[$4 " " $2, $3] = $6 }
    $1 == "tsc" { cyc["rx " $2, $3] = $4; cyc["tx " $2, $3] = $5 }
    function cell(a, k) { return (k in a) ? a[k] : "n/a" }
    function ratio(x, y) { return (x == "n/a" || y == "n/a" || y == 0) ? "n/a" : sprintf("%.2fx", x / y) }
    END {
      print "| burst function | driver | instructions/pkt (own / all) | cycles/pkt | ours/DPDK instructions | ours/DPDK cycles | target | met |"
      print "|---|---|---|---|---|---|---|---|"
      split("rx off|rx on|tx off|tx on", rows, "|")
      target["rx off"] = 35; target["rx on"] = 35; target["tx off"] = 50; target["tx on"] = 60
      missed = 0
      for (r = 1; r <= 4; r++) {
        row = rows[r]; name = (row ~ /^rx/ ? "RX" : "TX") ", offloads " substr(row, 4)
        split("ours dpdk null", drivers, " ")
        for (d = 1; d <= 3; d++) {
          k = row SUBSEP drivers[d]
          line = "| " name " | " drivers[d] " | " cell(own, k) " / " cell(all, k) " | " cell(cyc, k) " | "
          if (drivers[d] != "ours") { print line "| | | |"; continue }
          ko = row SUBSEP "dpdk"
          ri = ratio(cell(own, k), cell(own, ko)); rc = ratio(cell(cyc, k), cell(cyc, ko))
          mi = cell(own, k) != "n/a" && cell(own, k) + 0 <= target[row]
          mc = rc != "n/a" && cell(cyc, k) / cell(cyc, ko) <= 0.25
          missed += !mi + !mc
          print line ri " | " rc " | <= " target[row] " instr, <= 0.25x cycles | instructions " (mi ? "met" : "missed") ", cycles " (mc ? "met" : "missed") " |"
        }
      }
      printf "\n%d of 8 targets missed\n", missed
    }'
  echo "($(($(date +%s) - started)) s)"
  exit 0
fi
trixie=0  # (a second DPDK in a chroot)
tver=""
case "${1:-}" in
  --trixie) tver=24.11; shift ;;
  --dpdk) tver=${2:-}; shift 2 || die "--dpdk needs a version" ;;
  --arm64) tver=arm64; shift ;;
esac
if [ -n "$tver" ]; then
  trixie=1
  suite=$(chroot_of "$tver")
  tbuild=$(build_of "$tver")
fi
if [ "$tver" = arm64 ]; then
  # Nothing of the host's: x86 numbers do not compare with arm64 ones.
  "$top/scripts/test-arm64.sh" 24.11 build >/dev/null || die "the arm64 build in $tbuild failed"
  bench=$tbuild/app/mana_cost_bench
  names=(ours-arm64 dpdk-24.11-arm64 null-arm64)
  plugins=("$tbuild/drivers/net/mana/librte_net_mana.so" /usr/lib/aarch64-linux-gnu/dpdk/pmds-25.0/librte_net_mana.so.25 vdev:net_null)
  wheres=(chroot chroot chroot)
  work=$(mktemp -d "${TMPDIR:-/tmp}/mana-bench-cost.XXXXXX")
  trap 'rm -rf "$work"' EXIT
else
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

# The drivers: name, plugin (or vdev:net_null) and where their rounds run (host or chroot).
names=(ours dpdk)
plugins=("$ours" "$upstream")
wheres=(host host)
if [ "${MANA_BENCH_WITH_NULL:-0}" = 1 ]; then  # --compare: DPDK's net_null beside them
  names+=(null)
  plugins+=(vdev:net_null)
  wheres+=(host)
fi
if [ $trixie = 1 ]; then
  # Our PMD, the emulator and the benchmark built against that DPDK, as scripts/test-dpdk.sh does.
  "$top/scripts/test-dpdk.sh" "$tver" build >/dev/null || die "the DPDK $tver build in $tbuild failed"
  root=$("$top/scripts/debian-chroot.sh" "$suite")
  if [ "$suite" = bookworm ]; then
    # DPDK built from source (scripts/build-dpdk.sh): its install is the chroot's /usr/local, for
    # this script's chroot rounds too (the variable is inherited through mana_cost_bench --via).
    export MANA_CHROOT_USR_LOCAL
    MANA_CHROOT_USR_LOCAL=$("$top/scripts/build-dpdk.sh" "$tver")
    root=${MANA_CHROOT_USR_LOCAL%/usr/local}
  fi
  tplugin=""
  for f in "$root"/usr/lib/*/dpdk/pmds-*/librte_net_mana.so "$root"/usr/local/lib/*/dpdk/pmds-*/librte_net_mana.so; do
    [ -e "$f" ] && [ -z "$tplugin" ] && tplugin=${f#"$root"/}
  done
  [ -n "$tplugin" ] || die "no net_mana plugin in the $suite chroot $root"
  names=(ours dpdk-22.11 null-22.11 "ours-$tver" "dpdk-$tver" "null-$tver")
  plugins=("$ours" "$upstream" vdev:net_null "$tbuild/drivers/net/mana/librte_net_mana.so" "/$tplugin" vdev:net_null)
  wheres=(host host host chroot chroot chroot)
fi
fi

if [ "${1:-}" != --callgrind ] && [ "$tver" = arm64 ]; then
  # The arm64 benchmark runs whole in the chroot (its rounds need no --via there).
  exec_args=(--mana-emu "$tbuild/emu/tool/mana-emu")
  for i in "${!names[@]}"; do exec_args+=(--pmd "${names[$i]}=${plugins[$i]}"); done
  exec "$top/scripts/debian-chroot.sh" "$suite" run "$bench" "${exec_args[@]}" "$@"
fi
if [ "${1:-}" != --callgrind ]; then
  exec_args=(--mana-emu "$emu")
  for i in "${!names[@]}"; do
    exec_args+=(--pmd "${names[$i]}=${plugins[$i]}")
    [ "${wheres[$i]}" = host ] || exec_args+=(--via "${names[$i]}=$top/scripts/bench-cost.sh --chroot-round $tver")
  done
  "$bench" "${exec_args[@]}" "$@" 2> >(grep -v -e 'mana_init_once' -e 'mana_mr_btree_init' >&2)
  exit $?
fi

# Callgrind: one child per driver, configuration and burst function, collecting only inside
# bench_rx (rte_eth_rx_burst) or bench_tx (rte_eth_tx_prepare + rte_eth_tx_burst), inclusive of
# what they call; instructions over the packets that went through them (warm-up included).
[ "$tver" = arm64 ] || command -v valgrind >/dev/null || die "valgrind is needed (apt-get install valgrind)"
shift
packets=20000
if [ $# -gt 0 ] && [[ $1 != --* ]]; then
  packets=$1
  shift
fi
sizes="64 512 1518" bursts="32 8" split=0 ptypes=all fast_free=off prepare=on queues=1 ports=1 only=
simd=() ring=() cache_sim=()
while [ $# -gt 0 ]; do
  case "$1" in
    --split) split=1; shift; continue ;;
    --cache-sim) cache_sim=(--cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=524288,8,64); shift; continue ;;
    --queues) queues=${2//,/ } ;;
    --ports) ports=$2 ;;
    --drivers) only=",$2," ;;
    --ptypes) ptypes=$2 ;;
    --fast-free) fast_free=$2 ;;
    --prepare) prepare=$2 ;;
    --simd-bitwidth) simd=(--simd-bitwidth "$2") ;;
    --ring) ring=(--ring "$2") ;;
    --sizes) sizes=${2//,/ } ;;
    --bursts) bursts=${2//,/ } ;;
    *) die "--callgrind: unknown option $1" ;;
  esac
  shift 2 || die "--callgrind: $1 needs a value"
done
# Self instructions per object of a callgrind profile ("object instructions" lines): cost lines
# count for the current ob=, except the inclusive cost line that follows each calls= line. A cost
# line is a line number and the events, instructions first (the cache misses after them with
# --cache-sim).
by_object() {
  awk 'function name_of(spec,   id, rest) {
         id = spec; sub(/\).*/, "", id); sub(/^\(/, "", id)
         rest = spec; sub(/^\([0-9]+\) ?/, "", rest)
         if (rest != "") names[id] = rest
         return names[id]
       }
       /^ob=/ { ob = name_of(substr($0, 4)); next }
       /^cob=/ { name_of(substr($0, 5)); next }
       /^calls=/ { skip = 1; next }
       /^[0-9+*-]/ { if (skip) { skip = 0; next } cost[ob] += $2; next }
       END { for (o in cost) print o, cost[o] }' "$1"
}
# "driver / DPDK libraries / benchmark / other" instructions per packet of profile $1 over $2
# packets, the driver's object being named $3.
split_cell() {
  by_object "$1" | awk -v n="$2" -v drv="$3" '
    { o = $1; sub(/.*\//, "", o)
      if (index(o, drv) == 1) d += $2
      else if (o ~ /^librte_/) l += $2
      else if (o ~ /^mana_cost_bench/) b += $2
      else x += $2 }
    END { printf "%.1f / %.1f / %.1f / %.1f", d / n, l / n, b / n, x / n }'
}
split_rows=()
if [ $trixie = 1 ]; then
  # The chroot sees this checkout, not the host's /tmp: its profiles go to the chroot's build.
  twork=$(mktemp -d "$tbuild/bench-cost.XXXXXX")
  trap 'rm -rf "$work" "$twork" /run/mana-bench-cost-$$' EXIT
fi
# The doorbell stores of a port start are trapped (doc/emulator.md "Lockstep"): the trap handler
# decodes the store at the fault's instruction pointer, which valgrind reports exactly only with
# these options (the instructions counted are the same).
vg_px=(--px-default=allregs-at-mem-access --px-file-backed=allregs-at-mem-access)
# One round under callgrind, collecting in $1 (bench_rx or bench_tx) for driver $2 into
# "$out_dir/$1"; the rest are the round's options. Prints the round's result line.
callgrind_round() {
  local fn=$1 i=$2
  shift 2
  if [ "${wheres[$i]}" = host ]; then
    "$emu" run --lockstep --doorbell poll --ports "$ports" -- valgrind --tool=callgrind "${vg_px[@]}" "${cache_sim[@]}" \
      --callgrind-out-file="$out_dir/$fn" --collect-atstart=no --toggle-collect="$fn" \
      "$bench" --round --pmd "${plugins[$i]}" "$@"
  else
    "$top/scripts/debian-chroot.sh" "$suite" run "$tbuild/emu/tool/mana-emu" run --lockstep --doorbell poll \
      --ports "$ports" -- valgrind --tool=callgrind "${vg_px[@]}" "${cache_sim[@]}" \
      --callgrind-out-file="$out_dir/$fn" --collect-atstart=no \
      --toggle-collect="$fn" "$tbuild/app/mana_cost_bench" --round --pmd "${plugins[$i]}" "$@"
  fi
}
# The ports and queues columns only where they vary from one queue on one port.
scaling=0
[ "$queues" = 1 ] && [ "$ports" = 1 ] || scaling=1
lead() { [ $scaling = 0 ] || printf '| %s | %s ' "$ports" "$queue"; }
[ $scaling = 0 ] || printf '| ports | queues '
printf '| frame | burst | offloads | driver | rx_burst instructions/pkt | tx_burst instructions/pkt |\n'
[ $scaling = 0 ] || printf '|---|---'
printf '|---|---|---|---|---|---|\n'
for queue in $queues; do
  for size in $sizes; do
    for burst in $bursts; do
      for offloads in off on; do
        for i in "${!names[@]}"; do
          driver=${names[$i]}
          [ -z "$only" ] || [[ $only == *",$driver,"* ]] || continue
          [ "${wheres[$i]}" = host ] && out_dir=$work || out_dir=$twork
          cells=()
          for fn in bench_rx bench_tx; do
            out=$(callgrind_round $fn "$i" --size "$size" --burst "$burst" --offloads $offloads \
              --packets "$packets" --ptypes "$ptypes" --fast-free "$fast_free" --prepare "$prepare" "${simd[@]}" "${ring[@]}" --queues "$queue" --ports "$ports" --file-prefix "mana-cost-cg-$$" 2>"$work/stderr") \
              || { cat "$work/stderr" >&2; die "$driver $size B burst $burst offloads $offloads, $queue queue(s), $ports port(s) failed"; }
            if [[ $out == n/a* ]]; then
              cells+=("${out}")
              continue
            fi
            all=$(awk '/^result/ { print $5 }' <<<"$out")
            ir=$(sed -n 's/^totals: *//p' "$out_dir/$fn")
            # With --cache-sim the totals are Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw: the last-level
            # (here L2-sized) read and write misses follow the instructions.
            cells+=("$(awk -v n="$all" '{ printf "%.1f", $1 / n; if (NF == 9) printf " (%.2f+%.2f)", $8 / n, $9 / n }' <<<"$ir")")
            if [ $split = 1 ]; then
              plugin=${plugins[$i]}
              [[ $plugin == vdev:* ]] && object=librte_${plugin#vdev:} || object=$(basename "$plugin")
              split_rows+=("$(lead)| $size B | $burst | $offloads | $driver | $fn | ${cells[-1]} | $(split_cell "$out_dir/$fn" "$all" "${object%%.so*}") |")
            fi
          done
          lead
          printf '| %s B | %s | %s | %s | %s | %s |\n' "$size" "$burst" $offloads "$driver" "${cells[0]}" "${cells[1]}"
        done
      done
    done
  done
done
if [ $split = 1 ]; then
  printf '\nInstructions/packet by object: the driver'"'"'s own (with what it inlines from DPDK'"'"'s headers) / DPDK'"'"'s libraries (librte_*: mempool, mbuf, ethdev) / the benchmark (the inlined ethdev dispatch) / other (libc)\n\n'
  [ $scaling = 0 ] || printf '| ports | queues '
  printf '| frame | burst | offloads | driver | function | total | driver / DPDK libraries / benchmark / other |\n'
  [ $scaling = 0 ] || printf '|---|---'
  printf '|---|---|---|---|---|---|---|\n'
  printf '%s\n' "${split_rows[@]}"
fi
