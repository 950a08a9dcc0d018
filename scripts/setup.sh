#!/usr/bin/env bash
# Take a fresh Debian 12 machine (as root) to a state where the project builds and its tests run.
# Idempotent: every step checks first and does nothing when its result is already there.
#   scripts/setup.sh            packages + DPDK driver-SDK headers + hugepages
#   scripts/setup.sh --no-huge  skip the hugepage step (build-only machines)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
want_huge=1
[ "${1:-}" = "--no-huge" ] && want_huge=0

die() { echo "setup: error: $*" >&2; exit 1; }
say() { echo "setup: $*"; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and reserves hugepages); rerun with sudo"
. /etc/os-release 2>/dev/null || die "no /etc/os-release: only Debian 12 (or Ubuntu) is supported"
case "${ID:-}:${ID_LIKE:-}" in
  debian:*|ubuntu:*|*:*debian*) ;;
  *) die "this is ${PRETTY_NAME:-an unknown system}; only Debian 12 (or Ubuntu with DPDK 22.11) is supported" ;;
esac

# Everything the build, the emulator and the tests use; all from Debian.
packages=(dpdk dpdk-dev libdpdk-dev libibverbs-dev ibverbs-providers rdma-core
  meson ninja-build g++ pkg-config libgtest-dev python3 python3-pyelftools python3-scapy
  dpkg-dev dpdk-doc gcc xz-utils iproute2 iputils-ping tcpdump tshark procps util-linux kmod clang-format
  valgrind)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
apt_updated=0
apt_update() { [ $apt_updated = 1 ] || { apt-get update -q >/dev/null || die "apt-get update failed: check the apt sources"; apt_updated=1; }; }
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt_update
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
fi

"$top/scripts/fetch-dpdk-sdk.sh"

if [ $want_huge = 1 ]; then
  "$top/scripts/hugepages.sh" 512
fi
say "ready"
