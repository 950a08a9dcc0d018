#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the Debian binary packages of the driver (into the plugin folder of the installed DPDK),
# mana-emu (the emulator) and mana-doctor with Debian's own tooling (debian/, debhelper,
# dpkg-buildpackage -b), then check them with lintian. For the DPDK it is built against
# (doc/guide.md "Installing"): on Debian 12 (DPDK 22.11) the driver's package is librte-net-mana23;
# on Debian 13 (24.11) and unstable (25.11), whose own librte-net-mana25/26 ship the same plugin
# path, it is mana-pmd-dpdk25/26, which diverts their files (debian/librte-net-mana23.preinst).
# On a machine prepared by scripts/setup.sh, or in a chroot of scripts/debian-chroot.sh.
#   scripts/build-deb.sh [--arch arm64] [--sdk DIR] [OUT]   packages in OUT (default: build-deb/ for
#                                            DPDK 22.11, build-deb-SERIES/ for another,
#                                            build-deb-arm64-SERIES/ for arm64), printed one per line
# --sdk DIR: DPDK's driver-SDK headers, as meson's -Ddpdk_sdk_dir= (scripts/test-dpdk.sh's).
# --arch arm64: cross-built with dpkg-buildpackage -a arm64, in a chroot of scripts/debian-chroot.sh
# RELEASE-cross-arm64 (its arm64 DPDK and rdma-core are the build dependencies; debhelper gives
# meson its cross file).
# dpkg-buildpackage writes its results next to the source tree, so the tracked files are copied to
# OUT/src (keeping their times) and built there; later runs reuse OUT/src's build folder (-nc), so
# only what changed is compiled again.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "build-deb: error: $*" >&2; exit 1; }
sdk=""
host_arch=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sdk) sdk=${2:?--sdk needs a folder}; shift 2 ;;
    --arch) host_arch=${2:?--arch needs an architecture}; shift 2 ;;
    *) break ;;
  esac
done
[ -z "$host_arch" ] || [ "$host_arch" = arm64 ] || die "--arch: only arm64 is cross-built"

for tool in dpkg-buildpackage dh lintian pkg-config; do
  command -v $tool >/dev/null || die "$tool not found: run scripts/setup.sh"
done
# The installed DPDK's plugin folder (pmds-ABI) names the driver's package: Debian's own packages
# of net_mana are librte-net-manaABI, so ours has another name where the distribution has one.
series=$(pkg-config --modversion libdpdk | cut -d. -f1-2)
# (the host architecture's preprocessor: the cflags of arm64's DPDK have arm64-only options)
host_cpp=cpp
[ -z "$host_arch" ] || host_cpp=$(dpkg-architecture -a"$host_arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)-cpp
pmd_dir=$(printf '#include <rte_build_config.h>\n' | $host_cpp $(pkg-config --cflags libdpdk) -dM - \
  | sed -n 's/^#define RTE_EAL_PMD_PATH "\(.*\)"$/\1/p')
abi=${pmd_dir##*/pmds-}
abi=${abi%%.*}
case "$series" in
  22.11) package=librte-net-mana23 ;;  # Debian 12 ships no net_mana
  24.11 | 25.11) package=mana-pmd-dpdk$abi ;;
  *) die "DPDK $series is not one the driver builds for (22.11, 24.11, 25.11)" ;;
esac
default_out=$top/build-deb
[ "$series" = 22.11 ] || default_out=$top/build-deb-$series
[ -z "$host_arch" ] || default_out=$top/build-deb-$host_arch-$series
out=$(mkdir -p "${1:-$default_out}" && cd "${1:-$default_out}" && pwd)
version=$(cd "$top/debian" && dpkg-parsechangelog -l changelog -S Version)
meson_version=$(sed -n "s/^  version: '\(.*\)',$/\1/p" "$top/meson.build")
[ "$version" = "$meson_version" ] || die "debian/changelog has $version, meson.build $meson_version"

# A fresh copy of the tracked files (deleted files must not linger), the build folder kept.
src=$out/src
obj=obj-$(dpkg-architecture ${host_arch:+-a$host_arch} -qDEB_HOST_GNU_TYPE)  # debhelper's meson build folder
keep=$out/$obj.keep
rm -rf "$keep"
[ -d "$src/$obj" ] && mv "$src/$obj" "$keep"
rm -rf "$src"
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$top" ls-files -z --cached --others --exclude-standard | (cd "$top" && tar --null -T - -cf -) \
    | tar -xpf - -C "$src"
else
  # In a chroot of scripts/debian-chroot.sh: no git (nor the worktree's .git) there; the top-level
  # .gitignore's patterns (this project has only that one) leave out the same files.
  excludes=(--exclude=./.git)
  while IFS= read -r pattern; do
    [ -n "$pattern" ] || continue
    pattern=${pattern%/}
    [[ $pattern != /* ]] || pattern=.$pattern
    excludes+=(--exclude="$pattern")
  done <"$top/.gitignore"
  (cd "$top" && tar "${excludes[@]}" -cf - .) | tar -xpf - -C "$src"
fi
[ -e "$top/.deps" ] && ln -s "$(readlink -f "$top/.deps")" "$src/.deps"
[ -d "$keep" ] && mv "$keep" "$src/$obj"
# debian/ names the package for Debian 12; for another DPDK, its name and files follow $package.
if [ $package != librte-net-mana23 ]; then
  sed -i "s/librte-net-mana23/$package/g" "$src/debian/control"
  for f in "$src"/debian/librte-net-mana23.*; do
    mv "$f" "$src/debian/$package.${f##*/librte-net-mana23.}"
  done
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo

# A cross build names its build dependencies for the host architecture (libdpdk-dev:arm64 ...);
# the chroot has them, but the check would also want g++:arm64 for "g++": -d skips it.
cross=()
[ -z "$host_arch" ] || cross=(-a "$host_arch" -d)
(cd "$src" && MANA_DPDK_SDK_DIR=$sdk DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -b -us -uc -nc "${cross[@]}" >"$out/build.log" 2>&1) \
  || { tail -40 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: $out/build.log)"; }

# lintian: no errors and no warnings (the .changes covers both packages).
lintian --fail-on error,warning "$out"/mana-pmd_"${version}"_*.changes >"$out/lintian.log" 2>&1 \
  || { cat "$out/lintian.log" >&2; die "lintian found problems (log: $out/lintian.log)"; }
ls "$out"/*.deb
