#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the Debian binary packages librte-net-mana23 (the driver, into DPDK's plugin folder) and
# mana-emu (the emulator) with Debian's own tooling (debian/, debhelper, dpkg-buildpackage -b), then
# check them with lintian. On a machine prepared by scripts/setup.sh.
#   scripts/build-deb.sh [OUT]   packages in OUT (default: build-deb/), printed one per line
# dpkg-buildpackage writes its results next to the source tree, so the tracked files are copied to
# OUT/src (keeping their times) and built there; later runs reuse OUT/src's build folder (-nc), so
# only what changed is compiled again.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$top/build-deb}" && cd "${1:-$top/build-deb}" && pwd)
die() { echo "build-deb: error: $*" >&2; exit 1; }

for tool in dpkg-buildpackage dh lintian; do
  command -v $tool >/dev/null || die "$tool not found: run scripts/setup.sh"
done
version=$(cd "$top/debian" && dpkg-parsechangelog -l changelog -S Version)
meson_version=$(sed -n "s/^  version: '\(.*\)',$/\1/p" "$top/meson.build")
[ "$version" = "$meson_version" ] || die "debian/changelog has $version, meson.build $meson_version"

# A fresh copy of the tracked files (deleted files must not linger), the build folder kept.
src=$out/src
obj=obj-$(dpkg-architecture -qDEB_HOST_GNU_TYPE)  # debhelper's meson build folder
keep=$out/$obj.keep
rm -rf "$keep"
[ -d "$src/$obj" ] && mv "$src/$obj" "$keep"
rm -rf "$src"
mkdir -p "$src"
git -C "$top" ls-files -z --cached --others --exclude-standard | (cd "$top" && tar --null -T - -cf -) \
  | tar -xpf - -C "$src"
[ -e "$top/.deps" ] && ln -s "$(readlink -f "$top/.deps")" "$src/.deps"
[ -d "$keep" ] && mv "$keep" "$src/$obj"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo

(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -b -us -uc -nc >"$out/build.log" 2>&1) \
  || { tail -40 "$out/build.log" >&2; die "dpkg-buildpackage failed (log: $out/build.log)"; }

# lintian: no errors and no warnings (the .changes covers both packages).
lintian --fail-on error,warning "$out"/mana-pmd_"${version}"_*.changes >"$out/lintian.log" 2>&1 \
  || { cat "$out/lintian.log" >&2; die "lintian found problems (log: $out/lintian.log)"; }
ls "$out"/*.deb
