#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build DPDK's own net_mana, from the Debian source package of the installed DPDK (the same tarball
# scripts/fetch-dpdk-sdk.sh unpacks), as a plugin for Debian's testpmd:
#   .deps/upstream-mana/librte_net_mana_upstream.so
# It is the independent driver that cross-checks the emulator (doc/emulator.md "Fidelity"). Not committed:
# it is DPDK's code, built locally. Prints the path of the plugin.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "build-upstream-mana: error: $*" >&2; exit 1; }

"$top/scripts/fetch-dpdk-sdk.sh" >/dev/null
version=$(pkg-config --modversion libdpdk)
src=$(ls -d "$top"/.deps/src/dpdk-*"$version"/drivers/net/mana 2>/dev/null | head -n 1)
[ -n "$src" ] || die "no DPDK $version source under .deps/src: run scripts/fetch-dpdk-sdk.sh"
out=$top/.deps/upstream-mana
so=$out/librte_net_mana_upstream.so
if [ -f "$so" ] && [ "$so" -nt "$src/mana.c" ]; then echo "$so"; exit 0; fi
mkdir -p "$out"
command -v gcc >/dev/null || die "gcc is needed (apt-get install gcc)"

# Upstream's build passes these through DPDK's meson; a plugin build passes them by hand.
cflags=(-O2 -g -fPIC -w -DALLOW_EXPERIMENTAL_API -DALLOW_INTERNAL_API
  -DRTE_LOG_DEFAULT_LOGTYPE=pmd.net.mana
  -isystem "$top/.deps/dpdk-sdk/$version/include" $(pkg-config --cflags libdpdk libibverbs))
objs=()
for c in "$src"/*.c; do
  o=$out/$(basename "${c%.c}").o
  gcc "${cflags[@]}" -c "$c" -o "$o" || die "cannot compile $c"
  objs+=("$o")
done
gcc -shared -o "$so" "${objs[@]}" $(pkg-config --libs libdpdk libibverbs) -lrte_bus_pci -lmana \
  || die "cannot link $so"
echo "$so"
