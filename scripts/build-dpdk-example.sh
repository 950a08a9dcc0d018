#!/usr/bin/env bash
# Build one of DPDK's example applications from Debian's dpdk-doc sources into .deps/examples/
# (default: skeleton -> basicfwd). Prints the path of the program.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=${1:-skeleton}
src=/usr/share/dpdk/examples/$name
[ -d "$src" ] || { echo "build-dpdk-example: no $src: apt-get install dpdk-doc" >&2; exit 1; }
out=$top/.deps/examples/$name
mkdir -p "$out"
prog=$out/$( [ "$name" = skeleton ] && echo basicfwd || echo "$name" )
if [ ! -x "$prog" ] || [ "$src" -nt "$prog" ]; then
  gcc -O2 -w $(pkg-config --cflags libdpdk) "$src"/*.c -o "$prog" $(pkg-config --libs libdpdk) \
    || { echo "build-dpdk-example: cannot build $name" >&2; exit 1; }
fi
echo "$prog"
