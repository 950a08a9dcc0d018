#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The arm64 Debian packages as an Azure Cobalt user installs them (doc/guide.md "Arm64"): into a
# Debian 13 arm64 root (scripts/debian-chroot.sh trixie-arm64, every program under qemu-user) with
# apt, then Azure's documented dpdk-testpmd line on the installed mana-emu with no -d (the EAL loads
# our net_mana from its plugin folder, where it diverts Debian's), dpdk-pmdinfo.py on the installed
# plugin, and apt purge, after which Debian's net_mana is back byte for byte.
#   scripts/arm64-install-check.sh [DEBDIR]   DEBDIR: scripts/build-deb.sh --arch arm64's output
#                                             (default build-deb-arm64-24.11)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "arm64-install-check: error: $*" >&2; exit 1; }
say() { echo "arm64-install-check: $*" >&2; }

if [ "${1:-}" != --inside ]; then
  debs=$(cd "${1:-$top/build-deb-arm64-24.11}" && pwd)
  ls "$debs"/mana-pmd-dpdk25_*_arm64.deb "$debs"/mana-emu_*_arm64.deb "$debs"/mana-doctor_*_arm64.deb \
    >/dev/null || die "no arm64 packages in $debs: run scripts/build-deb.sh --arch arm64 in the cross chroot"
  "$top/scripts/hugepages.sh" >/dev/null
  exec "$top/scripts/debian-chroot.sh" trixie-arm64 run bash "$top/scripts/arm64-install-check.sh" --inside "$debs"
fi

# ---- inside the arm64 root ----
debs=$2
[ "$(dpkg --print-architecture)" = arm64 ] || die "not an arm64 root"
pmds=$(ls -d /usr/lib/aarch64-linux-gnu/dpdk/pmds-*)
debian_files() { sha256sum "$pmds"/librte_net_mana.so* 2>/dev/null | sort; }
before=$(debian_files)
[ -n "$before" ] || die "Debian's librte-net-mana25 is not in $pmds"
packages=(mana-pmd-dpdk25 mana-emu mana-doctor)
cleanup() { DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${packages[@]}" >/dev/null 2>&1 || true; }
trap cleanup EXIT

say "apt install ${packages[*]} (arm64)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  "$debs"/mana-pmd-dpdk25_*_arm64.deb "$debs"/mana-emu_*_arm64.deb "$debs"/mana-doctor_*_arm64.deb >/dev/null
plugin=$(dpkg -L mana-pmd-dpdk25 | grep -E '/librte_net_mana\.so\.[0-9]+\.[0-9]+$')
file -L "$plugin" 2>/dev/null | grep -q 'ARM aarch64' || od -An -tx1 -j18 -N2 "$plugin" | grep -q 'b7 00' \
  || die "$plugin is not an arm64 shared object"
dpdk-pmdinfo.py "$plugin" | grep -q '"params": "mac=<mac_addr> recovery_timeout=<seconds> tx_stall_timeout=<seconds>"' \
  || die "dpdk-pmdinfo.py does not show our net_mana's parameters in $plugin: $(dpdk-pmdinfo.py "$plugin")"
say "dpdk-pmdinfo.py: net_mana with mac, recovery_timeout, tx_stall_timeout in $plugin"

# Azure's "MANA single queue test" line, verbatim but for its lcores 1-3, which are placed on the
# CPUs this machine has (the EAL refuses an lcore without a CPU).
lcores="-l 1-3"
[ "$(nproc)" -ge 4 ] || lcores="--lcores 1@0,2@1,3@0"
line="dpdk-testpmd $lcores --vdev=\"\$BUS_INFO,mac=\$MANA_MAC\" -- --forward-mode=txonly --auto-start --txd=128 --rxd=128 --stats 2"
log=$(mktemp)
say "mana-emu run -- $line"
BUS_INFO=7870:00:00.0 MANA_MAC=00:0d:3a:00:00:01 setsid mana-emu run -- bash -c "$line" >"$log" 2>&1 &
emu=$!
# Whatever ends this script, the emulator and testpmd (their own session) end with it.
trap 'kill -KILL -$emu 2>/dev/null; cleanup' EXIT
# Bounded: testpmd under qemu reports its first rate within seconds.
deadline=$((SECONDS + 180))
until grep -qE 'Tx-pps:\s+[1-9]' "$log"; do
  kill -0 $emu 2>/dev/null || { cat "$log" >&2; die "testpmd ended before it reported a TX rate"; }
  [ $SECONDS -lt $deadline ] || { cat "$log" >&2; die "no TX rate within 180 s"; }
  sleep 0.5
done
# (not anchored: under qemu-user the command line starts with qemu's binfmt interpreter)
testpmd=$(pgrep -f -n 'dpdk-testpmd .*--forward-mode=txonly') || die "no dpdk-testpmd process"
mapped=$(grep -o '/[^ ]*net_mana[^ ]*' /proc/"$testpmd"/maps | sort -u)
[ "$mapped" = "$plugin" ] || die "testpmd maps net_mana from '$mapped', not the installed $plugin"
kill -INT -$emu
status=0
wait $emu || status=$?
[ $status = 0 ] || { cat "$log" >&2; die "mana-emu/testpmd exited $status after SIGINT"; }
trap cleanup EXIT
say "Azure's line: $(grep -E 'Tx-pps' "$log" | tail -1 | tr -s ' '), testpmd mapped $plugin only, exit 0"
rm -f "$log"

trap - EXIT
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${packages[@]}" >/dev/null
after=$(debian_files)
[ "$after" = "$before" ] || die "after apt purge Debian's net_mana differs:
before $before
after  $after"
say "apt purge: Debian's net_mana is back as it was ($(echo "$after" | wc -l) files)"
