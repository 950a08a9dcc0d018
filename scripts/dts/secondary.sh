#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A DPDK secondary process of the testpmd DTS runs (scripts/dts/inside.sh writes the prebuilt
# tree's app/dpdk-dumpcap as a call of this): the program runs in the emulated environment of
# that testpmd, which `mana-emu run` gave it, so it sees the same emulated VFs.
#   secondary.sh PRELOAD PROGRAM... -- ARGS...
# PRELOAD: shared objects (colon separated, may be empty) preloaded after the emulator's, in the
# order the primary loaded them: the bus, the mempool driver and the net driver its -d options
# load, which a secondary such as dpdk-dumpcap cannot be given (it takes no EAL options), and
# whose mempool ops must be registered in the primary's order (a pool names its ops by index);
# PROGRAM: the command (an `env` with its variables may come first: they are set before the
# preloaded objects are, which may need its LD_LIBRARY_PATH); ARGS: the program's own, of
# which --file-prefix names the primary (DTS always passes it: the testpmd it started with it).
set -eu
die() { echo "dts-secondary: error: $*" >&2; exit 1; }
preload=$1
shift
program=""
[ "${1:-}" != env ] || shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  program="$program $1"
  shift
done
[ $# -gt 0 ] || die "no -- after the program"
shift

prefix=""
previous=""
for arg in "$@"; do
  [ "$previous" != --file-prefix ] || prefix=$arg
  case "$arg" in --file-prefix=*) prefix=${arg#*=} ;; esac
  previous=$arg
done
[ -n "$prefix" ] || die "no --file-prefix: which testpmd is the primary is not known"

# The primary: the process started with that file prefix whose environment has the emulator's
# (the `mana-emu run` above it has the prefix on its command line too, not that environment).
primary=""
for pid in $(pgrep -f -- "--file-prefix[= ]$prefix( |\$)" || true); do
  if tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -q '^MANA_EMU_CONFIG='; then
    primary=$pid
    break
  fi
done
[ -n "$primary" ] || die "no running testpmd under the emulator with --file-prefix $prefix"
value() { tr '\0' '\n' <"/proc/$primary/environ" | sed -n "s/^$1=//p"; }
sysfs=$(value SYSFS_PCI_DEVICES)
config=$(value MANA_EMU_CONFIG)
emu_preload=$(value LD_PRELOAD)
[ -n "$sysfs" ] && [ -n "$config" ] && [ -n "$emu_preload" ] \
  || die "the environment of testpmd $primary lacks the emulator's variables"

# shellcheck disable=SC2086 # PROGRAM is a word list
exec env SYSFS_PCI_DEVICES="$sysfs" MANA_EMU_CONFIG="$config" \
  LD_PRELOAD="$emu_preload${preload:+:$preload}" $program "$@"
