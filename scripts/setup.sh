#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Take a fresh Debian 12 machine (as root) to a state where the project builds and its tests run.
# Idempotent: every step checks first and does nothing when its result is already there.
#   scripts/setup.sh            packages + DPDK driver-SDK headers + hugepages
#   scripts/setup.sh --main     only what the main job (scripts/run-main.sh) needs: DPDK, rdma-core,
#                               the compiler and meson, the SDK headers, hugepages
#   scripts/setup.sh --no-huge  skip the hugepage step (build-only machines)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
want_huge=1
main_only=0
for arg; do
  case "$arg" in
    --no-huge) want_huge=0 ;;
    --main) main_only=1 ;;
    *) echo "setup: error: unknown argument '$arg' (usage: $0 [--main] [--no-huge])" >&2; exit 2 ;;
  esac
done

die() { echo "setup: error: $*" >&2; exit 1; }
say() { echo "setup: $*"; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and reserves hugepages); rerun with sudo"
. /etc/os-release 2>/dev/null || die "no /etc/os-release: only Debian 12 (or Ubuntu) is supported"
case "${ID:-}:${ID_LIKE:-}" in
  debian:*|ubuntu:*|*:*debian*) ;;
  *) die "this is ${PRETTY_NAME:-an unknown system}; only Debian 12 (or Ubuntu with DPDK 22.11) is supported" ;;
esac

# What the build and the main job use (dpdk-testpmd is in dpdk-dev; pyelftools for the PMD info;
# the build configures the tests, which need GoogleTest's headers), then what the tests add; all
# from Debian.
packages=(dpdk dpdk-dev libdpdk-dev libibverbs-dev ibverbs-providers meson ninja-build g++ pkg-config
  libgtest-dev python3 python3-pyelftools xz-utils procps util-linux)
[ $main_only = 1 ] || packages+=(rdma-core python3-scapy dpkg-dev debhelper lintian dpdk-doc gcc
  iproute2 iputils-ping tcpdump tshark kmod clang clang-format clang-tidy valgrind ccache)

# The packages named that are not installed, one a line.
not_installed() {
  for p; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"; done
}
mapfile -t missing < <(not_installed "${packages[@]}")
# dpkg without a file-system sync per unpacked file, as Debian's container images install: half the
# unpack time on a fresh VM (115 s to 57 s for the main job's set). A crash in the middle of it can
# leave empty files behind: `apt-get install --reinstall` of the packages named then repairs them.
unsafe_io=(-o Dpkg::Options::=--force-unsafe-io)
apt_updated=0
apt_update() { [ $apt_updated = 1 ] || { apt-get update -q >/dev/null || die "apt-get update failed: check the apt sources"; apt_updated=1; }; }
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  # The SDK headers come from Debian's source package (fetch-dpdk-sdk.sh below): its deb-src entry
  # now, so that this update fetches the source index too.
  ls "$top"/.deps/dpdk-sdk/*/include/.complete >/dev/null 2>&1 || "$top/scripts/fetch-dpdk-sdk.sh" --add-deb-src >/dev/null
  apt_update
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  # The main job's set without Debian's recommendations (dbus, gnupg, fonts, manpages: 90 packages
  # of 400 on a fresh Debian 12); the tests' set as Debian installs it.
  norec=()
  [ $main_only = 0 ] || norec=(--no-install-recommends)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${norec[@]}" "${unsafe_io[@]}" "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
fi

# Open vSwitch with DPDK (tests/integration/test_ovs.py starts its own ovsdb-server and
# ovs-vswitchd). Installed with a policy-rc.d that forbids starting services, so the package's
# postinst does not start a system-wide OVS (init script or systemd unit) next to the tests'.
# A system OVS that was already running is left alone: the test shares no file or socket with it.
ovs_missing=()
[ $main_only = 1 ] ||
  mapfile -t ovs_missing < <(not_installed openvswitch-switch-dpdk openvswitch-switch openvswitch-common)
if [ ${#ovs_missing[@]} -gt 0 ]; then
  say "installing ${ovs_missing[*]} (no services started)"
  apt_update
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then  # (Debian's Docker images ship one that says the same)
    printf '#!/bin/sh\n# scripts/setup.sh: no service starts while it installs Open vSwitch\nexit 101\n' \
      >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  rc=0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${unsafe_io[@]}" "${ovs_missing[@]}" >/dev/null || rc=$?
  if [ $own_policy = 1 ]; then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
  [ $rc = 0 ] || die "apt-get install ${ovs_missing[*]} failed"
  # Nor at the next boot.
  if [ -d /run/systemd/system ]; then
    systemctl disable -q openvswitch-switch.service ovsdb-server.service ovs-vswitchd.service \
      2>/dev/null || true
  else
    update-rc.d openvswitch-switch disable >/dev/null 2>&1 || true
  fi
fi
[ $main_only = 1 ] || [ -x /usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk ] \
  || die "no /usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk after installing openvswitch-switch-dpdk"

"$top/scripts/fetch-dpdk-sdk.sh"

if [ $want_huge = 1 ]; then
  "$top/scripts/hugepages.sh"
fi
say "ready"
