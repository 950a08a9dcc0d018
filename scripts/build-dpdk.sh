#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DPDK itself built from its source (a release tarball or a `git archive` of a tag), as Azure's
# "build from source" instructions do (meson setup, ninja, ninja install into /usr/local), on Debian
# 12 (the chroot of scripts/debian-chroot.sh bookworm, with the packages those instructions name and
# no other DPDK), with the drivers and programs our tests use, for scripts/test-dpdk.sh 23.11|26.07
# (doc/guide.md "Other DPDK versions").
#   scripts/build-dpdk.sh VERSION [SOURCE]   prints the install's usr/local folder
# SOURCE: DPDK's tarball of that version; by default the one scripts/dpdk-source.sh finds.
# Built once per machine: the install is cached in /var/cache/mana-pmd/dpdk-VERSION-HASH
# (MANA_DPDK_CACHE for another folder), HASH being that of the source tarball and the build options,
# outside the checkout like the chroots; a finished install is reused and a half-built one is redone. Its
# usr/local is the chroot's /usr/local while it builds and while tests run (MANA_CHROOT_USR_LOCAL).
# Left out, to keep the build short on 2 cores: every driver and program no test uses.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "build-dpdk: error: $*" >&2; exit 1; }
say() { echo "build-dpdk: $*" >&2; }

version=${1:-}
case "$version" in
  23.11 | 26.07) ;;
  *) die "usage: $0 23.11|26.07 [SOURCE] (22.11, 24.11 and 25.11 come from Debian)" ;;
esac
src=${2:-$("$top/scripts/dpdk-source.sh" "$version" full)}
[ -f "$src" ] || die "no DPDK $version source tarball at $src (give DPDK $version's release tarball as SOURCE)"
# What the drivers, programs and libraries are, and why each is here:
#   bus/pci, bus/vdev, bus/vmbus, mempool/ring: what net_mana and net_netvsc probe and allocate on;
#   net/mana: DPDK's own, the independent driver beside ours; net/netvsc, net/vdev_netvsc: the
#   Hyper-V synthetic NIC's drivers (our port as their VF); net/null: the benchmarks' floor.
#   net/bonding: not tested itself, but testpmd links it (as a default build of DPDK has it), and so
#   registers the hash library's shared list, which a secondary (dpdk-proc-info links it through
#   eventdev) must find in its primary, or its EAL panics ("Cannot initialize tailq: RTE_HASH").
drivers=bus/pci,bus/vdev,bus/vmbus,mempool/ring,net/mana,net/netvsc,net/vdev_netvsc,net/null,net/bonding
# testpmd, proc-info and dumpcap; the examples' sources are installed (share/dpdk/examples) and
# the tests build l3fwd from them with its Makefile and pkg-config, as a user does.
apps=test-pmd,proc-info,dumpcap,pdump
# Shared libraries (DPDK's default is static): a plugin loaded with -d or from the plugin folder needs
# programs that link DPDK's libraries as shared objects, as distributions build them (a static
# testpmd that loads a plugin gets a second copy of each library, and EAL panics).
options=(--prefix=/usr/local -Ddefault_library=shared -Dbuildtype=release -Denable_drivers=$drivers -Denable_apps=$apps
  -Dtests=false -Denable_docs=false -Denable_driver_sdk=true -Dexamples= -Dmax_lcores=128)
# The cache's name: the source's sha256 and these options (another option set is another build).
hash=$({ sha256sum <"$src"; echo "${options[*]}"; } | sha256sum | cut -c1-16)
cache=${MANA_DPDK_CACHE:-/var/cache/mana-pmd}/dpdk-$version-$hash
stamp=$cache/.complete
usr_local=$cache/install/usr/local
# (caches made before the install folder was renamed from root/ keep their build)
[ ! -f "$stamp" ] || [ -d "$cache/install" ] || [ ! -d "$cache/root" ] || mv "$cache/root" "$cache/install"

if [ -f "$stamp" ]; then
  echo "$usr_local"
  exit 0
fi
mkdir -p "$(dirname "$cache")"
exec 9>"$cache.lock"
flock 9  # one builder at a time; the next finds it complete
if [ -f "$stamp" ]; then
  echo "$usr_local"
  exit 0
fi
started=$SECONDS
rm -rf "$cache"
say "DPDK $version from $src into $cache (about 3 min on 2 cores; once per machine)"
tree=/usr/local/src/dpdk-$version
mkdir -p "$cache/install$tree"
tar -xf "$src" -C "$cache/install$tree" --strip-components=1
grep -qx "${version}.0" "$cache/install$tree/VERSION" \
  || die "$src holds DPDK $(cat "$cache/install$tree/VERSION"), not $version"
"$top/scripts/debian-chroot.sh" bookworm >/dev/null
# In the chroot, as a user: meson setup, ninja, ninja install (the logs stay in the cache).
MANA_CHROOT_USR_LOCAL=$usr_local "$top/scripts/debian-chroot.sh" bookworm run sh -c '
  cd "$0" && meson setup build "$@" >../meson-setup.log 2>&1 || { echo "meson setup failed"; exit 1; }
  ninja -C build -j"$(nproc)" >../ninja.log 2>&1 || { echo "ninja failed"; exit 1; }
  ninja -C build install >../install.log 2>&1 || { echo "ninja install failed"; exit 1; }' \
  "$tree" "${options[@]}" || die "building DPDK $version failed (logs: $usr_local/src/*.log)"
[ -x "$usr_local/bin/dpdk-testpmd" ] || die "no dpdk-testpmd in $usr_local/bin"
# The source and objects are not needed after the install (600 MB); the logs stay.
mv "$usr_local/src"/*.log "$cache/"
rm -rf "$usr_local/src"
echo "$version $src $hash built in $((SECONDS - started)) s" >"$stamp"
say "DPDK $version built in $((SECONDS - started)) s"
echo "$usr_local"
