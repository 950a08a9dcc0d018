#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How long a new user waits for the main job's first packet rates on a fresh Debian 12 machine:
# scripts/run-main.sh from this checkout's HEAD (a clone), in a Debian 12 root made afresh from a
# minbase debootstrap (cached once per machine, unpacked anew for every run), where setup.sh has
# to install everything, the compiler included. Prints run-main's output with seconds since its
# start, then the time of the first line with a non-zero Rx-pps. Root; the network reaches Debian's
# mirror. PRE_PACKAGES="g++ ..." installs those first (untimed): a machine image that has them.
#   scripts/time-first-run.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "time-first-run: error: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, mounts)"
cache=/var/cache/mana-pmd
base=$cache/first-run-base.tar
root=$cache/first-run
mirror=http://deb.debian.org/debian
if [ ! -f "$base" ]; then
  command -v debootstrap >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null || die "cannot install debootstrap"
  rm -rf "$root" && mkdir -p "$root"
  debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg bookworm "$root" "$mirror" \
    >/dev/null || die "debootstrap bookworm failed"
  # A Debian 12 machine's sources: the release, its updates and security, binary packages only.
  rm -f "$root/etc/apt/sources.list"
  printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: %s\n\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: %s\n' \
    "$mirror" /usr/share/keyrings/debian-archive-keyring.gpg http://deb.debian.org/debian-security \
    /usr/share/keyrings/debian-archive-keyring.gpg >"$root/etc/apt/sources.list.d/debian.sources"
  tar -C "$root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
fi
rm -rf "$root" && mkdir -p "$root" && tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q "$top" "$root/src"
cat >"$root/time-run-main.sh" <<'EOF'
cd /src
start=$(( ${EPOCHREALTIME/./} / 100000 ))
first=""
scripts/run-main.sh 10 2>&1 | while IFS= read -r line; do
  t=$(( ${EPOCHREALTIME/./} / 100000 - start ))
  printf '%4d.%d %s\n' $((t / 10)) $((t % 10)) "$line"
  if [ -z "$first" ] && [[ $line =~ Rx-pps:\ +[1-9] ]]; then
    first=1
    printf 'time-first-run: first packet rates %d.%d s after scripts/run-main.sh started\n' $((t / 10)) $((t % 10)) >/run/first
  fi
done
cat /run/first 2>/dev/null || { echo "time-first-run: no packet rates were printed" >&2; exit 1; }
EOF
unshare --mount --propagation private bash -c '
  set -e
  root=$1 pre=$2
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o mode=755 tmpfs "$root/run"
  in_root() { chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
  if [ -n "$pre" ]; then
    in_root bash -c "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pre >/dev/null"
  fi
  in_root bash /time-run-main.sh
' - "$root" "${PRE_PACKAGES:-}"
