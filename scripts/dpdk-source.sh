#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prints the DPDK source tarball of a version that the build and test scripts use (build-dpdk.sh,
# test-dpdk.sh): DPDK's code, never part of this project, taken from the first of
#   1. MANA_DPDK_SRC: a tarball or source tree given by hand;
#   2. MANA_DPDK_SOURCES: a folder of tarballs;
#   3. a `dpdk/` folder in a folder beside this checkout (where CI keeps them, having no internet).
#   scripts/dpdk-source.sh VERSION full   the whole tree: dpdk-VERSION-src.tar.xz (a `git archive` of
#                                         the tag) or DPDK's release tarball dpdk-VERSION.tar.xz
#   scripts/dpdk-source.sh VERSION sdk    what a PMD build needs: dpdk-VERSION-sdk-src.tar.xz, or
#                                         the whole tree
# Release tarballs: https://fast.dpdk.org/rel/ (doc/guide.md "Other DPDK versions").
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: $0 VERSION full|sdk}
kind=${2:?usage: $0 VERSION full|sdk}
if [ -n "${MANA_DPDK_SRC:-}" ]; then
  echo "$MANA_DPDK_SRC"
  exit 0
fi
names=("dpdk-$version-src.tar.xz" "dpdk-$version.tar.xz")
[ "$kind" = full ] || names=("dpdk-$version-sdk-src.tar.xz" "${names[@]}")
folders=()
[ -z "${MANA_DPDK_SOURCES:-}" ] || folders+=("$MANA_DPDK_SOURCES")
for d in "$top"/../*/dpdk; do [ -d "$d" ] && folders+=("$(cd "$d" && pwd)"); done
for d in "${folders[@]}"; do
  for n in "${names[@]}"; do
    if [ -f "$d/$n" ]; then
      echo "$d/$n"
      exit 0
    fi
  done
done
echo "dpdk-source: no DPDK $version source (${names[*]}) in ${folders[*]:-no folder}: download" \
  "DPDK's release tarball from https://fast.dpdk.org/rel/ and set MANA_DPDK_SOURCES to its folder" \
  "(or MANA_DPDK_SRC to the file)" >&2
exit 1
