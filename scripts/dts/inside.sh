#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DPDK's DTS on one machine, inside the Debian 13 chroot (started by scripts/test-dts.sh, which
# documents it): the system under test (SUT) and the traffic generator (TG) are both this chroot,
# reached over SSH as root at 127.0.0.1 in a private network namespace, so that the TAP devices,
# the sshd and every frame stay inside it.
#   inside.sh RUN_DIR DTS_DIR MANA_EMU VERSION SUITES EMU_OPTIONS PRELOAD DUMPCAP TESTPMD...
# RUN_DIR: where the generated files, keys and DTS's output go; DTS_DIR: DPDK's dts/ folder;
# MANA_EMU: the emulator's mana-emu; VERSION: the DPDK version the SUT reports; SUITES: DTS suite
# names, comma separated, a suite may name its cases as suite:case+case; EMU_OPTIONS: options of
# `mana-emu run` for every VF (a profile, --anti-spoof off, --hw ...: one word list); PRELOAD and
# DUMPCAP: the plugins testpmd's -d options load (colon separated) and the dpdk-dumpcap command
# (one word list), which DTS's dpdk-dumpcap runs as a secondary of the running testpmd
# (scripts/dts/secondary.sh); TESTPMD: the testpmd command (program, environment, the -d options
# loading the driver under test) that DTS's dpdk-testpmd runs under the emulator.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "dts-inside: error: $*" >&2; exit 1; }

if [ "${1:-}" != --in-netns ]; then
  # A private network namespace (only its loopback and our TAPs), then this script again.
  exec unshare --net "$0" --in-netns "$@"
fi
shift
run=$1 dts=$2 emu=$3 version=$4 suites=$5 emu_options=$6 preload=$7 dumpcap=$8
shift 8
testpmd=$*
mkdir -p "$run"
ip link set lo up

# The ports: SUT port k is emulated VF 7870:00:0k.0, one port, MAC 00:0d:3a:00:0k:01, its wire the
# TAP dtstgk, whose host side is TG port k (DTS's two-link topology: SUT port k <-> TG port k). The
# TG ports get PCI addresses of their own (DTS names every port by one); nothing else uses them.
nports=2
ports_json="["
for k in $(seq 0 $((nports - 1))); do
  tap=dtstg$k
  ip link del "$tap" 2>/dev/null || true
  ip tuntap add dev "$tap" mode tap
  ip link set "$tap" address "02:00:00:00:0$k:10"
  # No IPv6 on the TG ports: the kernel's router solicitations and MLD reports would reach the SUT
  # and count in its statistics, which DTS checks exactly.
  sysctl -qw "net.ipv6.conf.$tap.disable_ipv6=1"
  ports_json+="{\"pci\":\"7870:00:0$k.0\",\"ifname\":\"eth$((k + 1))\",\"mac\":\"00:0d:3a:00:0$k:01\",\"driver\":\"mana\",\"vendor\":\"Microsoft Corporation\",\"product\":\"MANA Virtual Function (emulated)\",\"description\":\"Ethernet interface\"},"
  ports_json+="{\"pci\":\"0000:fe:00.$k\",\"ifname\":\"$tap\",\"mac\":\"\",\"driver\":\"tun\",\"tap\":true,\"vendor\":\"Linux\",\"product\":\"TAP device\",\"description\":\"Ethernet interface\"},"
done
ports_json="${ports_json%,}]"

# The stand-ins DTS runs on its nodes (lshw, sudo: scripts/dts/bin) come first on PATH: they are
# bind-mounted over the chroot's empty /usr/local/sbin in this mount namespace only.
mkdir -p "$run/bin"
cp "$here"/bin/* "$run/bin/"
echo "$ports_json" >"$run/bin/ports.json"
[ -z "$(ls -A /usr/local/sbin)" ] || die "the chroot's /usr/local/sbin is not empty"
mount --bind "$run/bin" /usr/local/sbin

# The SUT's "DPDK tree": DTS takes a tree with a prebuilt build folder (precompiled_build_dir) and
# runs build/app/dpdk-testpmd from it; here that is TESTPMD under the emulator with both VFs, each
# on its TAP.
tree=$run/sut-tree
rm -rf "$tree" && mkdir -p "$tree/build/app"
echo "$version" >"$tree/VERSION"
vfs=""
for k in $(seq 0 $((nports - 1))); do
  vfs+=" --vf 7870:00:0$k.0 --mac 00:0d:3a:00:0$k:01 --ifname eth$((k + 1)) --wire tap:dtstg$k"
done
cat >"$tree/build/app/dpdk-testpmd" <<WRAP
#!/bin/sh
# DTS's testpmd (written by scripts/dts/inside.sh): DPDK $version's dpdk-testpmd on emulated MANA VFs.
exec $emu run $emu_options$vfs -- $testpmd "\$@"
WRAP
chmod 755 "$tree/build/app/dpdk-testpmd"
# DTS's dpdk-dumpcap (packet_capture) runs beside that testpmd, naming it by --file-prefix: that
# DPDK's dpdk-dumpcap as its secondary, in the emulated environment the testpmd runs in.
cat >"$tree/build/app/dpdk-dumpcap" <<WRAP
#!/bin/sh
# DTS's dpdk-dumpcap (written by scripts/dts/inside.sh): DPDK $version's dpdk-dumpcap, a secondary of DTS's testpmd.
exec $here/secondary.sh "$preload" $dumpcap -- "\$@"
WRAP
chmod 755 "$tree/build/app/dpdk-dumpcap"
# dpdk-devbind.py, which DTS copies to the SUT from the DPDK tree it runs from (../usertools): the
# emulated VFs' state, read from the emulator's sysfs (scripts/dts/devbind.py).
# Its VFs are the same, on null wires: testpmd may hold the TAPs meanwhile.
mkdir -p "$dts/../usertools"
cat >"$dts/../usertools/dpdk-devbind.py" <<WRAP
#!/bin/sh
# DTS's dpdk-devbind.py (written by scripts/dts/inside.sh): scripts/dts/devbind.py on the emulated VFs.
exec $emu run${vfs//tap:dtstg?/null} -- python3 $here/devbind.py "\$@"
WRAP
chmod 755 "$dts/../usertools/dpdk-devbind.py"

# sshd on 127.0.0.1:22 of this namespace, root by key only; PYTHON_BASIC_REPL: Python 3.13's REPL
# colours its prompt, DTS waits for a plain ">>>".
ssh=$run/ssh
rm -rf "$ssh" "$run/home" "$run/output" && mkdir -p "$ssh" "$run/home/.ssh" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$run/home/.ssh/id_ed25519"
cp "$run/home/.ssh/id_ed25519.pub" "$ssh/authorized_keys"
cat >"$ssh/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port 22
HostKey $ssh/host_key
PidFile $ssh/sshd.pid
PermitRootLogin prohibit-password
AuthorizedKeysFile $ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SetEnv PYTHON_BASIC_REPL=1
Subsystem sftp internal-sftp
MaxSessions 50
MaxStartups 50
CFG
/usr/sbin/sshd -f "$ssh/sshd_config" -E "$ssh/sshd.log"
# At the end: the sshd and the sessions it still serves (all started by this script).
cleanup() {
  [ -f "$ssh/sshd.pid" ] || return 0
  local sshd sessions
  sshd=$(cat "$ssh/sshd.pid")
  sessions=$(ps -o pid= --ppid "$sshd" 2>/dev/null || true)
  kill "$sshd" $sessions 2>/dev/null || true
}
trap cleanup EXIT

# DTS's configuration files.
cat >"$run/nodes.yaml" <<CFG
- name: sut
  hostname: 127.0.0.1
  user: root
  os: linux
  ports:
$(for k in $(seq 0 $((nports - 1))); do printf '    - name: port-%s\n      pci: "7870:00:0%s.0"\n      os_driver_for_dpdk: mana\n      os_driver: mana\n' $k $k; done)
- name: tg
  hostname: 127.0.0.1
  user: root
  os: linux
  ports:
$(for k in $(seq 0 $((nports - 1))); do printf '    - name: port-%s\n      pci: "0000:fe:00.%s"\n      os_driver_for_dpdk: tun\n      os_driver: tun\n' $k $k; done)
CFG
{
  cat <<CFG
dpdk:
  lcores: "0-1"
  memory_channels: 1
  build:
    dpdk_location:
      dpdk_tree: $tree
      remote: true
    precompiled_build_dir: build
func_traffic_generator:
  type: SCAPY
perf: false
func: true
crypto: false
use_virtual_functions: false
skip_smoke_tests: true
system_under_test_node: sut
traffic_generator_node: tg
port_topology:
  - sut.port-0 <-> tg.port-0
  - sut.port-1 <-> tg.port-1
test_suites:
CFG
  IFS=, read -ra list <<<"$suites"
  for s in "${list[@]}"; do
    if [[ $s == *:* ]]; then
      echo "  - test_suite: ${s%%:*}"
      echo "    test_cases: [$(echo "${s#*:}" | sed 's/+/, /g')]"
    else
      echo "  - $s"
    fi
  done
} >"$run/test_run.yaml"
# The link speed the VFs report: the emulated netdev's (hw link-speed-mbps: 25000 by default, -1 in
# the profiles of kernels before 6.17, where the driver reports 100 Gbps; doc/hardware.md §9.24).
speed_mbps=25000
case " $emu_options " in *" --profile azure-2023 "* | *" --profile azure-2025 "* | *" --profile strict "*) speed_mbps=-1 ;; esac
[[ $emu_options =~ link-speed-mbps=(-?[0-9]+) ]] && speed_mbps=${BASH_REMATCH[1]}
[ "$speed_mbps" = -1 ] && speed_mbps=100000
# Suite configuration: what rss checks the driver's reports against (doc/hardware.md §2.5), and the
# speed speed_capabilities expects.
cat >"$run/tests_config.yaml" <<CFG
rss:
  NUM_QUEUES: 4
  ACTUAL_KEY_SIZE: 40
  ACTUAL_RETA_SIZE: 64
speed_capabilities:
  test_parameters:
    0: "$((speed_mbps / 1000)) Gbps"
CFG

cd "$dts"
export HOME=$run/home PYTHON_BASIC_REPL=1
# DTS's Python can stay alive after its run ends (after an error it calls critical, a thread of its
# traffic generator's sniffer is left running): once its log says the run has ended it gets 30 s
# to exit, then it is ended. The whole run is bounded too (one hour; a full run takes minutes).
timeout --kill-after=10 3600 python3 main.py --test-run-config-file "$run/test_run.yaml" \
  --nodes-config-file "$run/nodes.yaml" --tests-config-file "$run/tests_config.yaml" \
  --output-dir "$run/output" &
dts_pid=$!
ended_at=""
while kill -0 "$dts_pid" 2>/dev/null; do
  if [ -z "$ended_at" ] && grep -qs "DTS execution has ended" "$run/output/dts.log"; then
    ended_at=$SECONDS
  elif [ -n "$ended_at" ] && [ $((SECONDS - ended_at)) -ge 30 ]; then
    echo "dts-inside: DTS did not exit within 30 s after its run ended: ending it" >&2
    kill "$dts_pid" 2>/dev/null || true
    break
  fi
  sleep 1
done
rc=0
wait "$dts_pid" || rc=$?
exit $rc
