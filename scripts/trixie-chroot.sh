#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A Debian 13 (trixie) chroot with Debian 13's DPDK 24.11 (and its own net_mana) and rdma-core, for
# the cross-check of the emulator with an independent driver (scripts/crosscheck-trixie.sh).
#   scripts/trixie-chroot.sh                 create or complete the chroot; prints its root
#   scripts/trixie-chroot.sh run CMD [ARG..] run CMD inside it, as root, with this checkout at the
#                                            same path, and /proc, /sys, /dev, hugepages, /run
# Idempotent and fast when the chroot is already complete. Everything is installed into the chroot
# (MANA_TRIXIE_ROOT, default /var/cache/mana-pmd/trixie); the host's apt sources stay as they are.
# The mounts live in a private mount namespace of the `run` command: they go away with it, on
# success, failure or kill alike, and never show on the host.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
root=${MANA_TRIXIE_ROOT:-/var/cache/mana-pmd/trixie}
die() { echo "trixie-chroot: error: $*" >&2; exit 1; }
say() { echo "trixie-chroot: $*" >&2; }

# What the emulator's build and the integration harness need, plus Debian 13's DPDK with net_mana
# (Debian 13 ships dpdk-testpmd and dpdk-proc-info in dpdk-dev; the ring mempool driver is only a
# Recommends of dpdk, and recommendations are not installed), and valgrind for the cost benchmark's
# instruction counts (scripts/bench-cost.sh --trixie --callgrind), and clang for the doorbell-trap
# forms it compiles (a build without it has a skipping test, which fails under CI=true).
packages=(dpdk dpdk-dev librte-net-mana25 librte-mempool-ring25 libibverbs-dev ibverbs-providers rdma-core g++ meson ninja-build
  pkg-config libgtest-dev python3 python3-scapy iproute2 iputils-ping tcpdump procps util-linux coreutils kmod valgrind
  clang)
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
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

if [ "${1:-}" = "--inside-namespace" ]; then
  # Runs in the private mount namespace that `unshare` made: nothing mounted here leaks out.
  shift
  mount --make-rprivate /
  mount_all
  cd "$top"
  exec chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CI="${CI:-}" \
    MANA_TEST_VERBOSE="${MANA_TEST_VERBOSE:-}" /bin/sh -c 'cd "$0" && exec "$@"' "$top" "$@"
fi

in_chroot() { unshare --mount --propagation private "$top/scripts/trixie-chroot.sh" --inside-namespace "$@"; }

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
  [ -f /usr/share/keyrings/debian-archive-trixie-stable.gpg ] \
    || die "no Debian 13 archive key on the host: apt-get install debian-archive-keyring (2023.3+deb12u2 or later)"
  local mirror security
  mirror=$(host_mirror)
  security=$(security_mirror)
  if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$root/.debootstrap-done" ]; then
    say "debootstrap trixie from $mirror into $root"
    rm -rf "$root"
    mkdir -p "$root"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
      trixie "$root" "$mirror" >"$root.debootstrap.log" 2>&1 \
      || die "debootstrap failed (log: $root.debootstrap.log; last lines: $(tail -n 3 "$root.debootstrap.log" | tr '\n' ' '))"
    touch "$root/.debootstrap-done"
  fi
  {
    echo "deb $mirror trixie main"
    echo "deb $mirror trixie-updates main"
    [ -z "$security" ] || echo "deb $security trixie-security main"
  } >"$root/etc/apt/sources.list"
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
  *) die "unknown argument '$1' (usage: $0 [run CMD [ARG...]])" ;;
esac
