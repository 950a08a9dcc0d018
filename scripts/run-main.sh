#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: Debian's dpdk-testpmd forwarding packets through net_mana on the emulated MANA VF,
# showing packet rates. Does its own setup on a fresh Debian 12 machine (as root).
#   scripts/run-main.sh [seconds]   (default 10)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
secs=${1:-10}
# Only what this job needs: the tests' packages and build come with scripts/test.sh.
scripts/setup.sh --main
echo "run-main: building the driver and the emulator (ninja -C build main-job)"
MANA_BUILD_TARGETS=main-job BUILD_DIR=$top/build scripts/build.sh >/dev/null
pmd=$top/build/drivers/net/mana/librte_net_mana.so
# DPDK's EAL refuses -d plugins below a world-writable folder (a checkout under /tmp): use a copy.
d=$(dirname "$pmd")
while [ "$d" != / ]; do
  if [ -n "$(find "$d" -maxdepth 0 -perm -0002)" ]; then
    mkdir -p /run/mana-pmd && chmod 755 /run/mana-pmd && cp "$pmd" /run/mana-pmd/ && pmd=/run/mana-pmd/$(basename "$pmd")
    break
  fi
  d=$(dirname "$d")
done
emu=$top/build/emu/tool/mana-emu

if [ ! -x "$emu" ]; then
  # Without the emulator the main job stops at loading the driver into testpmd.
  echo "run-main: the emulator is not built yet; showing that testpmd loads net_mana" >&2
  exec timeout -s INT --preserve-status "$secs" stdbuf -oL dpdk-testpmd -l 0-1 --file-prefix mana-main \
    -m 256 -d "$pmd" --no-pci --vdev net_null0 -- --stats-period 2 --total-num-mbufs 4096
fi
# mac forwarding: every frame leaves with the sending port's own source MAC and the other port's
# MAC as destination, as it must on Azure, where the vPort drops a foreign source MAC (the
# emulator's anti-spoofing is on) and takes only its own MAC. The ports have mana-emu's default MACs.
exec timeout -s INT --preserve-status "$secs" "$emu" run --ports 2 --wire pair --doorbell poll --device-cpu 0 -- \
  stdbuf -oL dpdk-testpmd -l 0-1 --file-prefix mana-main -m 512 -d "$pmd" -a 7870:00:00.0 -- \
  --forward-mode=mac --auto-start --stats-period 2 --record-core-cycles --tx-first --txd=256 --rxd=256 \
  --eth-peer=0,00:0d:3a:00:00:02 --eth-peer=1,00:0d:3a:00:00:01
