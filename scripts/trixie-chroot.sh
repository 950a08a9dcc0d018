#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian 13 (trixie, DPDK 24.11) chroot: scripts/debian-chroot.sh trixie, under its old name.
#   scripts/trixie-chroot.sh                 create or complete the chroot; prints its root
#   scripts/trixie-chroot.sh run CMD [ARG..] run CMD inside it
exec "$(dirname "$0")/debian-chroot.sh" trixie "$@"
