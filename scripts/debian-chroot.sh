#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A Debian chroot with that distribution's DPDK (and its own net_mana), rdma-core, Open vSwitch and
# what our build and integration suite need: Debian 13 (trixie, DPDK 24.11) or Debian unstable (sid,
# DPDK 25.11), for scripts/test-dpdk.sh (doc/guide.md "Other DPDK versions"). Debian 12 (bookworm)
# without any DPDK, for a DPDK built from source (scripts/build-dpdk.sh): MANA_CHROOT_USR_LOCAL=DIR
# makes DIR the chroot's /usr/local for one `run`, where that DPDK was installed (its libraries are
# found through LD_LIBRARY_PATH, as after a user's `ldconfig`).
#   scripts/debian-chroot.sh SUITE                 create or complete the chroot; prints its root
#   scripts/debian-chroot.sh SUITE run CMD [ARG..] run CMD inside it, as root, with this checkout at
#                                                  the same path, and /proc, /sys, /dev, hugepages, /run
# SUITE: bookworm (or 12), trixie (or 13) or sid (or unstable). scripts/trixie-chroot.sh is `debian-chroot.sh trixie`.
# Idempotent and fast when the chroot is already complete. Everything is installed into the chroot
# (MANA_CHROOT_ROOT, default /var/cache/mana-pmd/SUITE; MANA_TRIXIE_ROOT for trixie as before); the
# host's apt sources stay as they are. The mounts live in a private mount namespace of the `run`
# command: they go away with it, on success, failure or kill alike, and never show on the host.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "debian-chroot: error: $*" >&2; exit 1; }
say() { echo "debian-chroot: $*" >&2; }
case "${1:-}" in
  bookworm|12) suite=bookworm; dpdk_abi=""; key=debian-archive-bookworm-stable.gpg ;;
  trixie|13) suite=trixie; dpdk_abi=25; key=debian-archive-trixie-stable.gpg ;;
  sid|unstable) suite=sid; dpdk_abi=26; key=debian-archive-trixie-automatic.gpg ;;
  *) die "the first argument is the suite: bookworm (Debian 12, no DPDK), trixie (Debian 13, DPDK 24.11) or sid (unstable, DPDK 25.11)" ;;
esac
shift
root=${MANA_CHROOT_ROOT:-/var/cache/mana-pmd/$suite}
[ $suite != trixie ] || root=${MANA_TRIXIE_ROOT:-$root}

# What our build (python3-pyelftools for the PMD info), the emulator's and the integration harness
# need, plus the distribution's DPDK with net_mana (Debian 13 ships dpdk-testpmd and dpdk-proc-info
# in dpdk-dev; the ring mempool driver is only a Recommends of dpdk, and recommendations are not
# installed), valgrind for the cost benchmark's instruction counts (scripts/bench-cost.sh --trixie
# --callgrind), clang for the doorbell-trap forms it compiles (a build without it has a skipping
# test, which fails under CI=true), dpdk-doc for the l3fwd examples' sources, tshark, Open vSwitch
# with DPDK, and what scripts/build-deb.sh needs (debhelper, lintian, build-essential).
# Debian 12's chroot has no DPDK: what building DPDK from source needs instead (scripts/build-dpdk.sh
# builds it there; Azure's list: libnuma-dev, libelf-dev for the BPF library, pyelftools, and
# libpcap-dev, without which DPDK builds no dpdk-dumpcap), and no Open vSwitch (Debian 12's is
# built with Debian 12's DPDK 22.11).
packages=(libibverbs-dev ibverbs-providers
  rdma-core g++ make meson ninja-build pkg-config libgtest-dev python3 python3-scapy python3-pyelftools iproute2
  iputils-ping tcpdump tshark procps util-linux coreutils kmod valgrind clang dpkg-dev debhelper
  lintian build-essential xz-utils)
if [ -n "$dpdk_abi" ]; then
  packages+=(dpdk dpdk-dev dpdk-doc "librte-net-mana$dpdk_abi" "librte-mempool-ring$dpdk_abi" openvswitch-switch-dpdk)
else
  packages+=(libnuma-dev libelf-dev libpcap-dev)
fi
# Changes to the list make an existing chroot install the difference.
stamp="$root/.mana-pmd-complete"
want_stamp=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -d' ' -f1)

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot and mounts); rerun with sudo"

# The Debian mirror of the host's own apt sources (as scripts/fetch-dpdk-sdk.sh derives deb-src).
host_mirror() {
  local uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $3 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || die "no Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
  echo "$uri"
}
security_mirror() {
  local uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ && /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $3 ~ /security/ { print $2; exit }' /etc/apt/sources.list)
  fi
  echo "$uri"
}

# Mounts for `run`, made inside the private mount namespace (see the `inside` entry below).
mount_all() {
  # The chroot's / must be a mount point: `ip netns exec` remounts it (make-rslave).
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  # Recursive: /dev/pts, /dev/shm, /dev/mqueue and the host's /dev/hugepages come along.
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  if ! mountpoint -q "$root/dev/hugepages"; then
    mkdir -p "$root/dev/hugepages"
    mount -t hugetlbfs nodev "$root/dev/hugepages"
  fi
  mount -t tmpfs -o mode=755 tmpfs "$root/run"
  mkdir -p "$root/run/netns" "$root/run/lock" "$root$top"
  mount --bind "$top" "$root$top"
  [ -z "${MANA_CHROOT_USR_LOCAL:-}" ] || mount --bind "$MANA_CHROOT_USR_LOCAL" "$root/usr/local"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

if [ "${1:-}" = "--inside-namespace" ]; then  # (after the suite)
  # Runs in the private mount namespace that `unshare` made: nothing mounted here leaks out.
  shift
  mount --make-rprivate /
  mount_all
  cd "$top"
  library_path=()
  if [ -n "${MANA_CHROOT_USR_LOCAL:-}" ]; then
    for dir in "$root"/usr/local/lib/*-linux-gnu; do  # (none before DPDK is installed there)
      [ ! -d "$dir" ] || library_path=(LD_LIBRARY_PATH="${dir#"$root"}")
    done
  fi
  exec chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 "${library_path[@]}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CI="${CI:-}" \
    MANA_TEST_VERBOSE="${MANA_TEST_VERBOSE:-}" /bin/sh -c 'cd "$0" && exec "$@"' "$top" "$@"
fi

in_chroot() { unshare --mount --propagation private "$top/scripts/debian-chroot.sh" "$suite" --inside-namespace "$@"; }

create() {
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ]; then return 0; fi
  # One creator at a time (checkouts on one machine share the chroot); the next finds it complete.
  mkdir -p "$(dirname "$root")"
  exec 9>"$root.lock"
  flock 9
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ]; then exec 9>&-; return 0; fi
  command -v debootstrap >/dev/null || {
    say "installing debootstrap on the host"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; } \
      || die "apt-get install debootstrap failed"
  }
  [ -f "/usr/share/keyrings/$key" ] \
    || die "no $key on the host: apt-get install debian-archive-keyring (2023.3+deb12u2 or later)"
  local mirror security
  mirror=$(host_mirror)
  security=$(security_mirror)
  if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$root/.debootstrap-done" ]; then
    say "debootstrap $suite from $mirror into $root"
    rm -rf "$root"
    mkdir -p "$root"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
      "$suite" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 \
      || die "debootstrap failed (log: $root.debootstrap.log; last lines: $(tail -n 3 "$root.debootstrap.log" | tr '\n' ' '))"
    touch "$root/.debootstrap-done"
  fi
  # Unstable has no updates or security suites.
  {
    echo "deb $mirror $suite main"
    if [ $suite != sid ]; then
      echo "deb $mirror $suite-updates main"
      [ -z "$security" ] || echo "deb $security $suite-security main"
    fi
  } >"$root/etc/apt/sources.list"
  # Unstable's Release file is valid for a week only: a mirror that is a snapshot (as this network's)
  # serves an expired one, which apt refuses without this. Debootstrap checked its signature.
  if [ $suite = sid ]; then
    echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99mana-pmd-snapshot-mirror"
  fi
  # No service starts inside the chroot while packages install (Open vSwitch's postinst would).
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  say "installing ${packages[*]} in the chroot"
  in_chroot sh -c 'apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null' \
    apt "${packages[@]}" || die "apt-get install in the chroot failed"
  in_chroot apt-get clean
  echo "$want_stamp" >"$stamp"
  exec 9>&-
}

case "${1:-}" in
  "") create; echo "$root" ;;
  run)
    shift
    [ $# -gt 0 ] || die "run needs a command"
    create
    in_chroot "$@"
    ;;
  *) die "unknown argument '$1' (usage: $0 SUITE [run CMD [ARG...]])" ;;
esac
