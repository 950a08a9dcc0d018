#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build one of DPDK's example applications (default: skeleton) from the installed DPDK's sources of
# them with the example's own Makefile, in a copy under .deps/examples/ (MANA_EXAMPLES_DIR:
# elsewhere, e.g. one per DPDK version, as scripts/test-dpdk.sh does). Prints the program's path.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=${1:-skeleton}
# The installed DPDK's examples: Debian's dpdk-doc (/usr/share/dpdk/examples), or those a DPDK built
# from source installs under its prefix.
examples=$(pkg-config --variable=prefix libdpdk)/share/dpdk/examples
[ -d "$examples/$name" ] || { echo "build-dpdk-example: no $examples/$name: apt-get install dpdk-doc" >&2; exit 1; }
work=${MANA_EXAMPLES_DIR:-$top/.deps/examples}
mkdir -p "$work"
if [ ! -d "$work/$name" ] || [ "$examples/$name" -nt "$work/$name" ]; then
  rm -rf "$work/$name" "$work/common"
  mkdir -p "$(dirname "$work/$name")"
  cp -r "$examples/$name" "$work/$name"
  [ -d "$examples/common" ] && cp -r "$examples/common" "$work/common"
fi
make -s -C "$work/$name" shared >/dev/null 2>&1 || make -C "$work/$name" shared >&2 \
  || { echo "build-dpdk-example: cannot build $name" >&2; exit 1; }
app=$(sed -n 's/^APP *= *//p' "$work/$name/Makefile")
echo "$work/$name/build/$app"
