#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A Debian chroot with that distribution's DPDK (and its own net_mana), rdma-core, Open vSwitch and
# what our build and integration suite need: Debian 13 (trixie, DPDK 24.11) or Debian unstable (sid,
# DPDK 25.11), for scripts/test-dpdk.sh (doc/guide.md "Other DPDK versions"). Debian 12 (bookworm)
# without any DPDK, for a DPDK built from source (scripts/build-dpdk.sh): MANA_CHROOT_USR_LOCAL=DIR
# makes DIR the chroot's /usr/local for one `run`, where that DPDK was installed (its libraries are
# found through LD_LIBRARY_PATH, as after a user's `ldconfig`).
# arm64 (doc/guide.md "Arm64"), through qemu-user and binfmt_misc (set up on the host here):
#   bookworm-cross-arm64, trixie-cross-arm64: an amd64 root with arm64 as a foreign architecture, as
#     Debian cross-builds: the cross compiler, that release's arm64 DPDK and rdma-core, its arm64
#     dpdk-testpmd and friends unpacked in /opt/dpdk-arm64 (first on PATH), and the native tools
#     (Python, meson) of the build and the integration harness; arm64 programs run under qemu.
#   trixie-arm64: a Debian 13 arm64 root (every program under qemu) with Debian's arm64 DPDK, where
#     our arm64 packages are installed as an Azure Cobalt user installs them (scripts/test-arm64.sh).
#   scripts/debian-chroot.sh SUITE                 create or complete the chroot; prints its root
#   scripts/debian-chroot.sh SUITE run CMD [ARG..] run CMD inside it, as root, with this checkout at
#                                                  the same path, and /proc, /sys, /dev, hugepages, /run
# SUITE: bookworm (or 12), trixie (or 13), sid (or unstable), or one of the arm64 roots above.
# scripts/trixie-chroot.sh is `debian-chroot.sh trixie`.
# Idempotent and fast when the chroot is already complete. Everything is installed into the chroot
# (MANA_CHROOT_ROOT, default /var/cache/mana-pmd/SUITE; MANA_TRIXIE_ROOT for trixie as before); the
# host's apt sources stay as they are. The mounts live in a private mount namespace of the `run`
# command: they go away with it, on success, failure or kill alike, and never show on the host.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "debian-chroot: error: $*" >&2; exit 1; }
say() { echo "debian-chroot: $*" >&2; }
name=${1:-}
flavour=native  # native: the host's architecture; cross: amd64 with arm64 foreign; arm64: all arm64
case "$name" in
  bookworm|12) suite=bookworm; dpdk_abi=""; key=debian-archive-bookworm-stable.gpg ;;
  trixie|13) suite=trixie; dpdk_abi=25; key=debian-archive-trixie-stable.gpg ;;
  sid|unstable) suite=sid; dpdk_abi=26; key=debian-archive-trixie-automatic.gpg ;;
  bookworm-cross-arm64) suite=bookworm; dpdk_abi=23; flavour=cross; key=debian-archive-bookworm-stable.gpg ;;
  trixie-cross-arm64) suite=trixie; dpdk_abi=25; flavour=cross; key=debian-archive-trixie-stable.gpg ;;
  trixie-arm64) suite=trixie; dpdk_abi=25; flavour=arm64; key=debian-archive-trixie-stable.gpg ;;
  *) die "the first argument is the suite: bookworm (Debian 12, no DPDK), trixie (Debian 13, DPDK 24.11), sid (unstable, DPDK 25.11), bookworm-cross-arm64, trixie-cross-arm64 or trixie-arm64" ;;
esac
shift
root=${MANA_CHROOT_ROOT:-/var/cache/mana-pmd/$([ $flavour = native ] && echo $suite || echo $name)}
[ "$name" != trixie ] && [ "$name" != 13 ] || root=${MANA_TRIXIE_ROOT:-$root}

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
opt_packages=()
packages=(libibverbs-dev ibverbs-providers
  rdma-core g++ make meson ninja-build pkg-config libgtest-dev python3 python3-scapy python3-pyelftools iproute2
  iputils-ping tcpdump tshark procps util-linux coreutils kmod valgrind clang dpkg-dev debhelper
  lintian build-essential xz-utils ccache)
if [ $flavour = cross ]; then
  # The native tools of the build and the harness, the cross compiler, the arm64 libraries the
  # driver, the emulator and their tests link, dpdk:arm64 (dpdk-pmdinfo.py: Python, run natively)
  # and valgrind:arm64 (instruction counts under qemu-user: scripts/bench-cost.sh --arm64); clang
  # compiles the doorbell trap's real stores for arm64 too (--target).
  # dpdk-dev:arm64 (dpdk-testpmd, dpdk-proc-info) depends on python3:arm64, which cannot sit
  # beside the native python3: it is unpacked into /opt instead.
  packages=(g++ crossbuild-essential-arm64 binutils-aarch64-linux-gnu meson ninja-build pkg-config
    python3 python3-scapy python3-pyelftools iproute2 iputils-ping tcpdump procps util-linux coreutils
    kmod dpkg-dev debhelper lintian build-essential xz-utils file clang
    libdpdk-dev:arm64 "librte-mempool-ring$dpdk_abi:arm64" libibverbs-dev:arm64
    ibverbs-providers:arm64 libgtest-dev:arm64 libc6-dev:arm64 libstdc++6:arm64 dpdk:arm64
    valgrind:arm64)
  [ $suite = bookworm ] || packages+=("librte-net-mana$dpdk_abi:arm64")
  opt_packages=(dpdk-dev:arm64)
elif [ $flavour = arm64 ]; then
  # What an Azure Cobalt user's Debian 13 has for DPDK: Debian's DPDK (dpdk-testpmd is in dpdk-dev)
  # with its net_mana, the ring mempool, rdma-core's libmana, Python (mana-doctor, dpdk-pmdinfo.py
  # with pyelftools); and what the
  # install check uses (file, procps).
  packages=(dpdk dpdk-dev "librte-net-mana$dpdk_abi" "librte-mempool-ring$dpdk_abi" ibverbs-providers
    rdma-core python3 python3-pyelftools iproute2 procps util-linux kmod file)
elif [ -n "$dpdk_abi" ]; then
  packages+=(dpdk dpdk-dev dpdk-doc "librte-net-mana$dpdk_abi" "librte-mempool-ring$dpdk_abi" openvswitch-switch-dpdk)
else
  packages+=(libnuma-dev libelf-dev libpcap-dev)
fi
# Changes to the list make an existing chroot install the difference.
stamp="$root/.mana-pmd-complete"
want_stamp=$(printf '%s\n' "${packages[@]}" "${opt_packages[@]}" | sha256sum | cut -d' ' -f1)

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
  path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  if [ $flavour = cross ]; then
    # The arm64 DPDK's programs and pkg-config files come first: what the harness runs and asks.
    path=/opt/dpdk-arm64/usr/bin:$path
    library_path+=(PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig MANA_CROSS_CHROOT=arm64)
  fi
  exec chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 "${library_path[@]}" \
    PATH="$path" CI="${CI:-}" \
    MANA_TEST_VERBOSE="${MANA_TEST_VERBOSE:-}" /bin/sh -c 'cd "$0" && exec "$@"' "$top" "$@"
fi

in_chroot() { unshare --mount --propagation private "$top/scripts/debian-chroot.sh" "$name" --inside-namespace "$@"; }

# arm64 programs run through qemu-user: the kernel hands every arm64 ELF to qemu-aarch64-static by
# binfmt_misc. Debian's registration has the F flag (the interpreter is opened once, at
# registration), so it works inside any chroot without a copy of qemu there.
ensure_qemu_binfmt() {
  command -v qemu-aarch64-static >/dev/null || {
    say "installing qemu-user-static on the host"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user-static >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user-static >/dev/null; } \
      || die "apt-get install qemu-user-static failed"
  }
  local fs=/proc/sys/fs/binfmt_misc
  mountpoint -q $fs || mount -t binfmt_misc binfmt_misc $fs \
    || die "cannot mount binfmt_misc on $fs (arm64 programs need it to run under qemu)"
  if [ ! -e $fs/qemu-aarch64 ]; then
    [ -f /usr/lib/binfmt.d/qemu-aarch64.conf ] || die "no /usr/lib/binfmt.d/qemu-aarch64.conf from qemu-user-static"
    cat /usr/lib/binfmt.d/qemu-aarch64.conf >$fs/register || die "cannot register qemu-aarch64 with binfmt_misc"
  fi
  grep -qx enabled $fs/qemu-aarch64 || echo 1 >$fs/qemu-aarch64
  grep -q '^flags:.*F' $fs/qemu-aarch64 \
    || die "binfmt_misc's qemu-aarch64 lacks the F flag, so chroots cannot run it: echo -1 >$fs/qemu-aarch64 and rerun"
}

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
  [ $flavour = native ] || ensure_qemu_binfmt
  local mirror security arch=()
  [ $flavour != arm64 ] || arch=(--arch=arm64)
  mirror=$(host_mirror)
  security=$(security_mirror)
  if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$root/.debootstrap-done" ]; then
    say "debootstrap $suite from $mirror into $root"
    rm -rf "$root"
    mkdir -p "$root"
    debootstrap "${arch[@]}" --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
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
  # dpkg unpacks without a file-system sync per file, as in Debian's container images (setup.sh
  # does the same on the host). After a machine crash meanwhile, delete the chroot to make it anew.
  echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/99mana-pmd-unsafe-io"
  [ $flavour != cross ] || in_chroot dpkg --add-architecture arm64
  say "installing ${packages[*]} in the chroot"
  in_chroot sh -c 'apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null' \
    apt "${packages[@]}" || die "apt-get install in the chroot failed"
  if [ ${#opt_packages[@]} -gt 0 ]; then
    say "unpacking ${opt_packages[*]} into /opt/dpdk-arm64"
    in_chroot sh -c 'rm -rf /opt/dpdk-arm64 /tmp/opt-debs && mkdir -p /opt/dpdk-arm64 /tmp/opt-debs && cd /tmp/opt-debs &&
      apt-get download -q "$@" >/dev/null && for deb in *.deb; do dpkg-deb -x "$deb" /opt/dpdk-arm64; done && rm -rf /tmp/opt-debs' \
      apt "${opt_packages[@]}" || die "unpacking ${opt_packages[*]} failed"
  fi
  if [ $flavour = cross ]; then
    # ldd, which dpdk-pmdinfo.py and the harness run on arm64 files: the native one knows only
    # amd64's loader; arm64's own lists them (under qemu), as ldd does on an arm64 machine.
    cat >"$root/usr/local/bin/ldd" <<'LDD'
#!/bin/sh
# ldd of a cross chroot (scripts/debian-chroot.sh): arm64 files through arm64's loader.
[ $# = 1 ] && [ -f "$1" ] && file -bL "$1" | grep -q 'ARM aarch64' || exec /usr/bin/ldd "$@"
exec /lib/ld-linux-aarch64.so.1 --list "$1"
LDD
    chmod 755 "$root/usr/local/bin/ldd"
    # stdbuf, through which the harness runs every program for line-buffered output: its preloaded
    # libstdbuf.so must be the program's architecture. ld.so expands $LIB to lib/<multiarch>, so
    # one LD_PRELOAD names amd64's copy for amd64 programs and arm64's (from coreutils:arm64) for
    # arm64 ones.
    in_chroot sh -c 'set -e; rm -rf /tmp/cu && mkdir -p /tmp/cu && cd /tmp/cu && apt-get download -q coreutils:arm64 >/dev/null &&
      dpkg-deb -x coreutils_*.deb x && for lib in x86_64-linux-gnu:/usr/libexec aarch64-linux-gnu:x/usr/libexec; do
        mkdir -p /usr/lib/${lib%%:*}/coreutils && cp ${lib#*:}/coreutils/libstdbuf.so /usr/lib/${lib%%:*}/coreutils/; done &&
      cd / && rm -rf /tmp/cu' || die "installing arm64's libstdbuf.so failed"
    cat >"$root/usr/local/bin/stdbuf" <<'STDBUF'
#!/bin/sh
# stdbuf -oL -eL of a cross chroot (scripts/debian-chroot.sh): amd64 and arm64 programs alike.
[ "${1:-}" = -oL ] && [ "${2:-}" = -eL ] || exec /usr/bin/stdbuf "$@"
shift 2
export _STDBUF_O=L _STDBUF_E=L LD_PRELOAD="/usr/\$LIB/coreutils/libstdbuf.so${LD_PRELOAD:+:$LD_PRELOAD}"
exec "$@"
STDBUF
    chmod 755 "$root/usr/local/bin/stdbuf"
  fi
  # Meson compiles through ccache when it finds it: the native chroots' cache is in their /root and
  # survives between runs; the build folder's path is left out of its key, as on the host
  # (scripts/test.sh).
  [ ! -x "$root/usr/bin/ccache" ] || printf 'hash_dir = false\nmax_size = 2G\n' >"$root/etc/ccache.conf"
  in_chroot apt-get clean
  echo "$want_stamp" >"$stamp"
  exec 9>&-
}

# binfmt_misc's registrations do not survive a reboot, a complete chroot does: checked every time.
case "${1:-}" in
  "") create; [ $flavour = native ] || ensure_qemu_binfmt; echo "$root" ;;
  run)
    shift
    [ $# -gt 0 ] || die "run needs a command"
    create
    [ $flavour = native ] || ensure_qemu_binfmt
    in_chroot "$@"
    ;;
  *) die "unknown argument '$1' (usage: $0 SUITE [run CMD [ARG...]])" ;;
esac
