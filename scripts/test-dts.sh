#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DPDK's own conformance suites (DTS, the dts/ folder of DPDK 26.07's source) against net_mana on
# the emulator (doc/testing.md "DTS"): DTS drives a dpdk-testpmd on two emulated MANA VFs and
# sends and sniffs frames with Scapy on the TAP devices that are their wires, all in the Debian 13
# chroot (scripts/debian-chroot.sh trixie: DTS's Python libraries are Debian 13's).
#   scripts/test-dts.sh [--ci] [--suites S,S:case+case,...] [--pmd ours|system] [--dpdk 26.07|24.11]
#                       [--emu "OPTIONS"]
# --suites: DTS suite names (default: all functional suites below), a suite may name its cases
#   after a colon, joined by +; --ci: CI's share (scripts/test.sh): the fastest suites (below) on
#   the build CI's stage of that DPDK made (scripts/test-dpdk.sh VERSION --ci); --pmd system: that DPDK's own net_mana instead of ours, for
#   comparison (its deviations are reported, never failed on); --dpdk: the testpmd and the DPDK
#   our driver is built against: 26.07 (default), the release whose DTS this is, built from source
#   (scripts/test-dpdk.sh 26.07 build: a Debian 12 build, whose testpmd and libraries run in the
#   Debian 13 chroot from a copy in build-dts/), or Debian 13's own DPDK 24.11 (scripts/test-dpdk.sh
#   24.11 build; DTS parses testpmd's output, and both change together); --emu:
#   options of `mana-emu run` for the VFs (e.g. "--anti-spoof off", "--profile strict"), whose
#   results go to build-dts/ under a name of their own.
# Installs what DTS needs in the chroot (its Python libraries, sshd, lsof: Debian's packages), extracts
# dts/ from the DPDK source tarball (scripts/dpdk-source.sh 26.07: MANA_DPDK_SRC by hand) into
# build-dts/ at run time, runs DTS (scripts/dts/inside.sh) and prints its result of every suite and
# case and the time. Fails on a failed or errored case unless doc/testing.md lists it under
# "DTS deviations" (a hardware limit, with its source in doc/hardware.md).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "test-dts: error: $*" >&2; exit 1; }
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

# The functional suites that apply to a NIC driver with Scapy as the traffic generator. Not here:
# the cryptodev and performance suites (no crypto device, no TRex), virtio_forward and softnic
# (other drivers' vdevs), rx_split (header split: a capability MANA does not offer, and a suite
# that skips itself by it), hello_world (an EAL example program, no driver) and l2fwd (four
# cores). packet_capture runs that DPDK's dpdk-dumpcap as a secondary of DTS's testpmd
# (scripts/dts/secondary.sh). smoke_tests comes last: DTS blocks every suite after a failed one,
# and its unit_tests and driver_tests cases are left out (they run `meson test` in DPDK's own
# build tree, of DPDK's libraries: here DPDK is the distribution's package, which has none).
all_suites=(port_stats checksum_offload mtu port_control rx_tx_offload unified_packet rss vlan
  dual_vlan qinq queue_toggle dynamic_queue_conf dynamic_config buffer_scatter promisc_support
  mac_filter blocklist port_restart_config_persistency speed_capabilities flow_offload
  packet_capture smoke_tests:device_bound_to_driver+devices_listed_in_testpmd)
# CI's share: the suites that take seconds each (smoke_tests last, as above).
ci_suites=(port_stats checksum_offload unified_packet
  smoke_tests:device_bound_to_driver+devices_listed_in_testpmd)
suites=""
ci=0
pmd_kind=ours
dpdk=26.07
emu_options=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) ci=1; shift ;;
    --suites) suites=$2; shift 2 ;;
    --suites=*) suites=${1#*=}; shift ;;
    --pmd) pmd_kind=$2; shift 2 ;;
    --pmd=*) pmd_kind=${1#*=}; shift ;;
    --dpdk) dpdk=$2; shift 2 ;;
    --dpdk=*) dpdk=${1#*=}; shift ;;
    --emu) emu_options=$2; shift 2 ;;
    --emu=*) emu_options=${1#*=}; shift ;;
    *) die "unknown argument '$1' (usage: $0 [--ci] [--suites S,...] [--pmd ours|system] [--dpdk 26.07|24.11])" ;;
  esac
done
if [ -z "$suites" ] && [ $ci = 1 ]; then
  suites=$(IFS=,; echo "${ci_suites[*]}")
elif [ -z "$suites" ]; then
  suites=$(IFS=,; echo "${all_suites[*]}")
fi
case "$pmd_kind" in ours | system) ;; *) die "--pmd takes ours or system" ;; esac
case "$dpdk" in 26.07 | 24.11) ;; *) die "--dpdk takes 26.07 or 24.11" ;; esac

started=$SECONDS
build=${MANA_DTS_BUILD:-$top/build-dpdk-$dpdk}
src=$(scripts/dpdk-source.sh 26.07 full)
[ -f "$src" ] || die "no DPDK 26.07 source tarball at $src (MANA_DPDK_SRC)"
run=$top/build-dts/$dpdk-$pmd_kind$(echo "$emu_options" | tr -c 'a-zA-Z0-9\n' '-' | sed 's/^-*/-/; s/-*$//; s/^-$//')

# The chroot and what DTS needs in it. Installed once, with a stamp of its own: the chroot's
# package list (scripts/debian-chroot.sh) is shared by every checkout and stays as it is.
root=$(scripts/debian-chroot.sh trixie)
dts_packages=(python3-pydantic python3-fabric python3-paramiko python3-invoke python3-yaml
  openssh-server openssh-client lsof ethtool)
want=$(printf '%s\n' "${dts_packages[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$root/.mana-pmd-dts" 2>/dev/null)" != "$want" ]; then
  scripts/debian-chroot.sh trixie run sh -c 'apt-get update -q >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null' \
    apt "${dts_packages[@]}" || die "installing DTS's packages in the chroot failed"
  echo "$want" >"$root/.mana-pmd-dts"
fi
scripts/hugepages.sh >/dev/null

if [ -z "${MANA_DTS_BUILD:-}" ]; then
  # (--ci: only the targets of CI's stage, which has built them already; the driver and the
  # emulator are among them.)
  ci_option=()
  [ $ci = 0 ] || ci_option=(--ci)
  scripts/test-dpdk.sh "$dpdk" "${ci_option[@]}" build >/dev/null
fi
[ -x "$build/emu/tool/mana-emu" ] || die "no $build/emu/tool/mana-emu"
rm -rf "$run" && mkdir -p "$run/dpdk"
# The testpmd DTS runs (under the emulator, scripts/dts/inside.sh) and the driver it loads.
if [ "$dpdk" = 24.11 ]; then
  # Debian 13's: its EAL loads the buses, the mempool and Debian's net_mana from its plugin folder;
  # a -d driver is loaded first and drives the VFs (doc/guide.md "Installing").
  version=$(scripts/debian-chroot.sh trixie run dpkg-query -W -f '${Version}' dpdk-dev | sed 's/-.*//')
  testpmd=(/usr/bin/dpdk-testpmd)
  [ $pmd_kind = system ] || testpmd+=(-d "$build/drivers/net/mana/librte_net_mana.so")
  # Its dpdk-dumpcap loads the same plugin folder; the mempool drivers testpmd links register
  # their ops first, and a -d driver first: preloaded, they come in the same order.
  dumpcap=/usr/bin/dpdk-dumpcap
  preload=$(scripts/debian-chroot.sh trixie run ldd /usr/bin/dpdk-testpmd \
    | grep -o 'librte_mempool_[a-z0-9_]*\.so\.[0-9]*' | sort -u | paste -sd:)
  [ $pmd_kind = system ] || preload+=${preload:+:}$build/drivers/net/mana/librte_net_mana.so
else
  # DPDK 26.07's testpmd and libraries (built on Debian 12 by scripts/build-dpdk.sh), copied where
  # the chroot sees them; its plugin folder (/usr/local/...) is not there, so the buses, the mempool
  # and the driver are -d plugins.
  install=$(scripts/build-dpdk.sh 26.07 "$src")
  sut=$run/dpdk-$dpdk
  mkdir -p "$sut/bin"
  cp -a "$install/bin/dpdk-testpmd" "$install/bin/dpdk-dumpcap" "$sut/bin/"
  cp -a "$install"/lib/*-linux-gnu "$sut/lib"
  version=$(cat "$install"/share/dpdk/VERSION 2>/dev/null || echo "$dpdk")
  pmds=$(echo "$sut"/lib/dpdk/pmds-*)
  driver=$build/drivers/net/mana/librte_net_mana.so
  [ $pmd_kind = ours ] || driver=$pmds/librte_net_mana.so
  testpmd=(env "LD_LIBRARY_PATH=$sut/lib" "$sut/bin/dpdk-testpmd" -d "$pmds/librte_bus_pci.so"
    -d "$pmds/librte_mempool_ring.so" -d "$driver")
  # dpdk-dumpcap takes no EAL options: the same plugins, preloaded in the same order.
  dumpcap="env LD_LIBRARY_PATH=$sut/lib $sut/bin/dpdk-dumpcap"
  preload=$pmds/librte_bus_pci.so:$pmds/librte_mempool_ring.so:$driver
fi
[ $pmd_kind = system ] || [ -f "$build/drivers/net/mana/librte_net_mana.so" ] || die "no driver in $build"

# DTS from the tarball, fresh every run (DPDK's files are never part of this project): dts/
# (DTS copies ../usertools/dpdk-devbind.py to the SUT: scripts/dts/inside.sh writes a stand-in).
tar -xf "$src" -C "$run/dpdk" --strip-components=1 --wildcards "*/dts"
echo "test-dts: DTS of $(basename "$src"), testpmd of DPDK $version, driver: $pmd_kind, emulator: ${emu_options:-defaults}, suites: $suites" >&2

rc=0
scripts/debian-chroot.sh trixie run "$top/scripts/dts/inside.sh" \
  "$run" "$run/dpdk/dts" "$build/emu/tool/mana-emu" "$version" "$suites" "$emu_options" "$preload" \
  "$dumpcap" "${testpmd[@]}" >"$run/dts.log" 2>&1 || rc=$?
[ -f "$run/output/results.json" ] || { tail -n 40 "$run/dts.log" >&2; die "DTS wrote no results (exit $rc; log: $run/dts.log)"; }
# DTS's own exit status counts every failure; the verdict is the report's, which knows the
# deviations (a failed run also shows there: execution errors, blocked suites).
check=()
[ $pmd_kind = system ] && check=(--no-fail)
rc=0
python3 scripts/dts/report.py "$run/output/results.json" doc/testing.md "${check[@]}" || rc=$?
echo "test-dts: $((SECONDS - started)) s (log: $run/dts.log, DTS output: $run/output)" >&2
exit $rc
