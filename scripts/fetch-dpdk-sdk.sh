#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Provide DPDK's driver-SDK headers for the installed libdpdk-dev. Debian does not ship them, so they
# are taken from the Debian source package of exactly the installed version, into an ignored folder
# (.deps/dpdk-sdk/<version>/include). Nothing is fetched when pkg-config's DPDK already has them.
#   scripts/fetch-dpdk-sdk.sh --from SRC --dest DIR
# takes them instead from a DPDK source tree or release tarball SRC (e.g. DPDK's dpdk-24.11.tar.xz,
# or a `git archive` of its tag, as scripts/dpdk-source.sh finds): DIR/include gets the headers, DIR/VERSION the tree's
# version (meson checks it against the installed DPDK's), DIR/net-mana DPDK's own net_mana source
# (for unit-format-crosscheck). meson does this itself for -Ddpdk_sdk_dir=SRC (doc/guide.md).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "fetch-dpdk-sdk: error: $*" >&2; exit 1; }

# The headers the PMD needs beyond the public API (plus what they include).
headers=(ethdev_driver.h ethdev_pci.h ethdev_vdev.h bus_pci_driver.h bus_driver.h dev_driver.h
  rte_eal_paging.h)

# --from SRC --dest DIR: SRC's headers, version and net_mana source into DIR (replaced whole).
from_source() {
  local src=$1 dest=$2 tree tmp="" f h
  if [ -f "$src" ]; then
    tmp=$(mktemp -d)
    # Only what is taken: lib/ (the headers), the PCI bus, net_mana, VERSION.
    tar -xf "$src" -C "$tmp" --wildcards '*/VERSION' '*/lib/*' '*/drivers/bus/pci/*' '*/drivers/net/mana/*' \
      2>/dev/null || die "cannot unpack $src as a DPDK source tarball (VERSION, lib/, drivers/bus/pci/, drivers/net/mana/)"
    tree=$(dirname "$(ls "$tmp"/*/VERSION | head -n 1)")
  elif [ -d "$src" ]; then
    tree=$src
  else
    die "$src is neither a DPDK source tree nor a tarball"
  fi
  [ -f "$tree/VERSION" ] && [ -f "$tree/lib/ethdev/ethdev_driver.h" ] \
    || die "$src is not a DPDK source tree (no VERSION and lib/ethdev/ethdev_driver.h)"
  rm -rf "$dest"
  mkdir -p "$dest/include" "$dest/net-mana"
  for h in "${headers[@]}"; do
    f=$(find "$tree/lib" "$tree/drivers/bus/pci" -name "$h" | head -n 1)
    [ -n "$f" ] || die "$h is not in $src"
    cp "$f" "$dest/include/"
  done
  cp "$tree"/drivers/net/mana/*.[ch] "$dest/net-mana/" 2>/dev/null || rmdir "$dest/net-mana"
  cp "$tree/VERSION" "$dest/VERSION"
  [ -z "$tmp" ] || rm -rf "$tmp"
  echo "fetch-dpdk-sdk: driver-SDK headers of DPDK $(cat "$dest/VERSION") in $dest"
}
# A deb-src entry for the same mirrors as the binary entries (none on a fresh Debian 12). Prints
# whether it added one; setup.sh asks for it before its own apt-get update, which then fetches the
# source index too (one update instead of two).
add_deb_src() {
  # (grep reads it all: with pipefail, an early exit could fail apt-cache on SIGPIPE)
  apt-cache showsrc dpdk 2>/dev/null | grep '^Package:' >/dev/null && { echo present; return; }
  [ "$(id -u)" = 0 ] || die "no deb-src for dpdk and not root: add a deb-src line for your mirror, or run as root"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      > /etc/apt/sources.list.d/mana-pmd-deb-src.sources
  elif [ -f /etc/apt/sources.list ]; then
    grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' > /etc/apt/sources.list.d/mana-pmd-deb-src.list
  else
    die "no apt sources found to derive a deb-src entry from"
  fi
  echo added
}
if [ "${1:-}" = "--add-deb-src" ]; then
  add_deb_src
  exit 0
fi
if [ "${1:-}" = "--from" ]; then
  [ $# = 4 ] && [ "$3" = "--dest" ] || die "usage: $0 --from DPDK_SOURCE_TREE_OR_TARBALL --dest DIR"
  from_source "$2" "$4"
  exit 0
fi

incdir=$(pkg-config --variable=includedir libdpdk 2>/dev/null) || die "pkg-config cannot find libdpdk: install libdpdk-dev"
have_all=1
for h in "${headers[@]}"; do [ -f "$incdir/dpdk/$h" ] || [ -f "$incdir/$h" ] || have_all=0; done
if [ $have_all = 1 ]; then
  echo "fetch-dpdk-sdk: the installed DPDK already has the driver-SDK headers"
  exit 0
fi

version=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null) || die "libdpdk-dev is not installed"
upstream=${version%-*}; upstream=${upstream#*:}
dest="$top/.deps/dpdk-sdk/$upstream/include"
# Besides the headers: the sources the format cross-checks compile against (net/mana; net/netvsc and
# bus/vmbus for the synthetic NIC's messages, doc/hardware.md §11).
sources=(drivers/bus/pci drivers/net/mana drivers/net/netvsc drivers/bus/vmbus)
have_sources() { ls "$top"/.deps/src/dpdk*-"$upstream"/drivers/net/netvsc/hn_nvs.h >/dev/null 2>&1; }
if [ -f "$dest/.complete" ] && have_sources; then
  exit 0
fi

work="$top/.deps/src"
mkdir -p "$work"
cd "$work"
if ! ls dpdk_"$upstream".orig.tar.* >/dev/null 2>&1; then
  if ! apt-get source --download-only -q "dpdk=$version" >/dev/null 2>&1; then
    # No deb-src entry yet, or an index older than the installed DPDK: add one, update, retry once.
    add_deb_src >/dev/null
    apt-get update -q >/dev/null || die "apt-get update failed (with a deb-src entry for dpdk)"
    apt-get source --download-only -q "dpdk=$version" >/dev/null \
      || die "cannot download the source of dpdk=$version: no deb-src reachable for it (check /etc/apt/sources.list.d/mana-pmd-deb-src.*)"
  fi
fi
tarball=$(ls dpdk_"$upstream".orig.tar.* | head -n 1)
# (tar is cut off by head: its SIGPIPE is expected)
prefix=$( (tar -tf "$tarball" 2>/dev/null || true) | head -n 1 | cut -d/ -f1)
if [ -f "$dest/.complete" ]; then
  # Headers in place from an earlier run that unpacked fewer sources: add the missing folders.
  tar -xf "$tarball" --wildcards "$prefix/drivers/net/netvsc/*" "$prefix/drivers/bus/vmbus/*" \
    || die "cannot unpack $tarball"
  echo "fetch-dpdk-sdk: DPDK $upstream's netvsc and vmbus sources in .deps/src/$prefix"
  exit 0
fi
rm -rf "$prefix"
patterns=("$prefix/lib/*")
for d in "${sources[@]}"; do patterns+=("$prefix/$d/*"); done
tar -xf "$tarball" --wildcards "${patterns[@]}" \
  || die "cannot unpack $tarball"

mkdir -p "$dest"
for h in "${headers[@]}"; do
  f=$(find "$prefix/lib" "$prefix/drivers/bus/pci" -name "$h" | head -n 1)
  [ -n "$f" ] || die "$h is not in $tarball"
  cp "$f" "$dest/"
done
touch "$dest/.complete"
echo "fetch-dpdk-sdk: driver-SDK headers of DPDK $upstream in ${dest#$top/}"
