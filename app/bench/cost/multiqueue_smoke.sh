#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-cost-multiqueue-smoke: several queues per port run in lockstep with polled doorbells
# (doc/emulator.md "Lockstep"): 16 queues on one port, then 4 on each of two ports with rings of 64
# descriptors (--ring). The round fails on any frame that does not come back on its own RX queue in
# the same step; here the packet counts it reports must be exactly what the step size gives (no
# lost or extra burst).
#   multiqueue_smoke.sh MANA_EMU MANA_COST_BENCH PMD_PLUGIN
set -euo pipefail
emu=$1 bench=$2 pmd=$3
packets=1000 burst=32
status=0
# ports, queues per port, descriptors per ring (--ring: the default 256, and the smallest)
for config in "1 16 256" "2 4 64"; do
  read -r ports queues ring <<<"$config"
  # forward() runs whole steps (a burst on every queue of every port) until it has the packets:
  # the warm-up until packets/4 plus one step, then the measured packets.
  step=$((burst * queues * ports))
  measured=$(((packets + step - 1) / step * step))
  warm=$(((packets / 4 + step + step - 1) / step * step))
  out=$("$emu" run --lockstep --doorbell poll --ports "$ports" -- "$bench" --round --pmd "$pmd" \
    --size 64 --burst "$burst" --offloads off --packets "$packets" --queues "$queues" \
    --ports "$ports" --ring "$ring" --file-prefix "mana-mq-smoke-$$") || {
    echo "FAIL: $ports port(s) x $queues queues, rings of $ring: the round failed"
    status=1
    continue
  }
  read -r _ _ _ got all < <(grep '^result' <<<"$out") || true
  if [ "${got:-}" != "$measured" ] || [ "${all:-}" != "$((warm + measured))" ]; then
    echo "FAIL: $ports port(s) x $queues queues: $out (expected $measured measured and $((warm + measured)) in all)"
    status=1
  else
    echo "ok: $ports port(s) x $queues queues, rings of $ring: $got packets measured, $all in all"
  fi
done
exit $status
