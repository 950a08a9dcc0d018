#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Make sure hugetlbfs is mounted and at least N (default 1024: the integration suite's budget, tests/integration/hugepages.py) 2 MiB hugepages are reserved.
set -euo pipefail
need=${1:-1024}
die() { echo "hugepages: error: $*" >&2; exit 1; }
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
[ -w "$nr" ] || die "cannot write $nr: run as root on a kernel with 2 MiB hugepages"
have=$(cat "$nr")
if [ "$have" -lt "$need" ]; then
  echo "$need" > "$nr"
  have=$(cat "$nr")
  [ "$have" -ge "$need" ] || die "only $have of $need 2 MiB hugepages could be reserved: free memory or reboot"
fi
if ! grep -qs ' hugetlbfs ' /proc/mounts; then
  mkdir -p /dev/hugepages
  mount -t hugetlbfs nodev /dev/hugepages || die "cannot mount hugetlbfs on /dev/hugepages"
fi
echo "hugepages: $have x 2 MiB reserved, hugetlbfs mounted"
