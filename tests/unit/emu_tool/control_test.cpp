// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>
#include <unistd.h>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <thread>

#include "config/fs_util.h"
#include "config/run_folder.h"
#include "config/sysfs_tree.h"
#include "control/control_client.h"
#include "control/control_command.h"
#include "control/control_command_format.h"
#include "control/control_server.h"
#include "control/unix_socket.h"
#include "fake_device.h"
#include "temp_dir.h"

namespace mana::emu {
namespace {

using testing::FakeDevice;
using Kind = ControlCommand::Kind;

constexpr int kTimeoutMs = 5000;

VfConfig two_port_vf() {
  VfConfig vf;
  vf.ports = {{{0x00, 0x0d, 0x3a, 0, 0, 1}, "eth1", false, "pair"},
              {{0x00, 0x0d, 0x3a, 0, 0, 2}, "eth2", false, "pair"}};
  return vf;
}

EmuConfig config_in(const std::string& root) {
  EmuConfig c;
  c.root = root;
  c.control = root + "/control.sock";
  c.vfs = {two_port_vf()};
  return c;
}

ControlCommand parse_ok(const char* line) {
  ControlCommand cmd;
  std::string error;
  EXPECT_TRUE(parse_control_command(line, &cmd, &error)) << line << ": " << error;
  return cmd;
}

std::string parse_error(const char* line) {
  ControlCommand cmd;
  std::string error;
  EXPECT_FALSE(parse_control_command(line, &cmd, &error)) << line;
  return error;
}

TEST(ControlParser, ParsesEveryCommand) {
  ControlCommand c = parse_ok("netdev 1 3 up");
  EXPECT_EQ(c.kind, Kind::kNetdev);
  EXPECT_EQ(c.vf, 1u);
  EXPECT_EQ(c.port, 3u);
  EXPECT_TRUE(c.up);
  EXPECT_FALSE(parse_ok("  netdev 0 0 down\r").up);
  EXPECT_EQ(parse_ok("remove 2").kind, Kind::kRemove);
  EXPECT_EQ(parse_ok("remove 2").vf, 2u);
  EXPECT_EQ(parse_ok("add 0").kind, Kind::kAdd);
  EXPECT_EQ(parse_ok("counters 5").kind, Kind::kCounters);
  EXPECT_EQ(parse_ok("counters 5").vf, 5u);
  EXPECT_EQ(parse_ok("live 0").kind, Kind::kLive);
  c = parse_ok("netvsc-counters 1 2");
  EXPECT_EQ(c.kind, Kind::kNetvscCounters);
  EXPECT_EQ(c.vf, 1u);
  EXPECT_EQ(c.port, 2u);
  EXPECT_EQ(format_control_command(c), "netvsc-counters 1 2");
  c = parse_ok("link 1 down");
  EXPECT_EQ(c.kind, Kind::kLink);
  EXPECT_EQ(c.vf, 1u);
  EXPECT_FALSE(c.up);
  EXPECT_EQ(format_control_command(c), "link 1 down");
  EXPECT_TRUE(parse_ok("link 0 up").up);
  c = parse_ok("rename 0 1 enP30832s1");
  EXPECT_EQ(c.kind, Kind::kRename);
  EXPECT_EQ(c.port, 1u);
  EXPECT_EQ(c.ifname, "enP30832s1");
  EXPECT_EQ(format_control_command(c), "rename 0 1 enP30832s1");

  c = parse_ok("fault 1 1 rx error-cqe 4 7");
  EXPECT_EQ(c.kind, Kind::kFault);
  EXPECT_EQ(c.vf, 1u);
  EXPECT_EQ(c.port, 1u);
  EXPECT_EQ(c.fault.kind, Fault::Kind::kErrorCqe);
  EXPECT_FALSE(c.fault.tx);
  EXPECT_EQ(c.fault.port, 1u);
  EXPECT_EQ(c.fault.cqe_type, 4u);
  EXPECT_EQ(c.fault.count, 7u);
  EXPECT_EQ(c.fault.skip, 0u);
  EXPECT_EQ(c.fault.every, 1u);

  c = parse_ok("fault 0 0 tx error-cqe 35 2 skip 5 every 3");
  EXPECT_EQ(c.fault.count, 2u);
  EXPECT_EQ(c.fault.skip, 5u);
  EXPECT_EQ(c.fault.every, 3u);
  c = parse_ok("fault 0 0 rx error-cqe 4 1 every 2 skip 0");
  EXPECT_EQ(c.fault.skip, 0u);
  EXPECT_EQ(c.fault.every, 2u);

  c = parse_ok("fault 0 1 tx stall");
  EXPECT_EQ(c.fault.kind, Fault::Kind::kStall);
  EXPECT_TRUE(c.fault.tx);
  EXPECT_EQ(c.fault.port, 1u);
  c = parse_ok("fault 0 1 tx bad-lkey 3");
  EXPECT_EQ(c.fault.kind, Fault::Kind::kBadLkey);
  EXPECT_TRUE(c.fault.tx);
  EXPECT_EQ(c.fault.port, 1u);
  EXPECT_EQ(c.fault.count, 3u);
}

TEST(ControlParser, RejectsMalformedCommands) {
  EXPECT_EQ(parse_error(""), "empty command");
  EXPECT_EQ(parse_error("reboot 0"),
            "unknown command 'reboot' (netdev, link, rename, remove, add, fault, counters, live, "
            "netvsc-counters)");
  EXPECT_EQ(parse_error("link 0 sideways"), "expected up or down, got 'sideways'");
  EXPECT_EQ(parse_error("link 0"), "usage: link <vf> up|down");
  EXPECT_EQ(parse_error("netdev 0 0"), "usage: netdev <vf> <port> up|down");
  EXPECT_EQ(parse_error("netdev 0 0 sideways"), "expected up or down, got 'sideways'");
  EXPECT_EQ(parse_error("netdev x 0 up"), "bad vf 'x' (0..65535)");
  EXPECT_EQ(parse_error("netdev 0 -1 up"), "bad port '-1' (0..65535)");
  EXPECT_EQ(parse_error("remove"), "usage: remove <vf>");
  EXPECT_EQ(parse_error("live 0 1"), "usage: live <vf>");
  EXPECT_EQ(parse_error("counters 99999999999"), "bad vf '99999999999' (0..65535)");
  EXPECT_EQ(parse_error("remove -1"), "bad vf '-1' (0..65535)");
  EXPECT_EQ(parse_error("remove 65536"), "bad vf '65536' (0..65535)");
  EXPECT_EQ(parse_error("fault 0 0 both bad-lkey 1"), "expected tx or rx, got 'both'");
  EXPECT_EQ(parse_error("fault 0 0 tx melt 1"),
            "unknown fault 'melt' (error-cqe, bad-lkey, stall)");
  EXPECT_EQ(parse_error("fault 0 0 rx stall"), "a stall fault is for tx only (an SQ that stops)");
  EXPECT_NE(parse_error("fault 0 0 tx stall 1").find("usage: fault"), std::string::npos);
  EXPECT_EQ(parse_error("fault 0 0 tx error-cqe 64 1"), "bad cqe_type '64' (1..63)");
  EXPECT_EQ(parse_error("fault 0 0 tx error-cqe 0 1"), "bad cqe_type '0' (1..63)");
  EXPECT_EQ(parse_error("fault 0 0 tx bad-lkey 0"), "bad count '0' (1..16777216)");
  EXPECT_NE(parse_error("fault 0 0 tx error-cqe 35").find("usage: fault"), std::string::npos);
  EXPECT_NE(parse_error("fault 0 0 tx error-cqe 35 1 skip").find("usage: fault"),
            std::string::npos);
  EXPECT_EQ(parse_error("fault 0 0 tx error-cqe 35 1 every 0"), "bad every '0' (1..16777216)");
  EXPECT_EQ(parse_error("fault 0 0 tx error-cqe 35 1 skip x"), "bad skip 'x' (0..16777216)");
  EXPECT_EQ(parse_error("fault 0 0 tx error-cqe 35 1 after 2"),
            "unknown fault option 'after' (skip, every)");
  EXPECT_NE(parse_error("fault 0 0 tx bad-lkey 1 2").find("usage: fault"), std::string::npos);
  EXPECT_NE(parse_error("fault 0 0").find("usage: fault"), std::string::npos);
}

TEST(ControlTargets, NetdevAndFaultsReachTheDeviceAndSysfs) {
  testing::TempDir dir;
  const EmuConfig config = config_in(dir.path());
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(config, &error)) << error;
  FakeDevice device(config.vfs[0]);
  ControlTargets targets(config, {});
  EXPECT_EQ(targets.handle_line("netdev 0 1 up"),
            "error VF 0 is not run by this process (pid " + std::to_string(::getpid()) + ")");
  // A number the run has no VF for: no such VF, with those there are.
  EXPECT_EQ(targets.handle_line("remove 99"), "error no such VF 99 (VFs: 0..0)");
  targets.add_vf(0, &device);
  EXPECT_EQ(targets.handle_line("netdev 0 1 up"), "ok netdev up");
  EXPECT_TRUE(device.netdev_up_[1]);
  EXPECT_FALSE(device.netdev_up_[0]);
  std::string state;
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/eth2/operstate", &state));
  EXPECT_EQ(state, "up\n");
  EXPECT_EQ(targets.handle_line("netdev 0 1 down"), "ok netdev down");

  EXPECT_FALSE(device.netdev_up_[1]);
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/eth2/operstate", &state));
  EXPECT_EQ(state, "down\n");
  EXPECT_EQ(targets.handle_line("netdev 0 2 up"), "error VF 0 has no port 2");

  // The NIC's link event: every port's carrier, and the operstate of an up netdev with it.
  EXPECT_EQ(targets.handle_line("netdev 0 1 up"), "ok netdev up");
  EXPECT_EQ(targets.handle_line("link 0 down"), "ok link down");
  for (const char* ifname : {"eth1", "eth2"}) {
    ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/" + ifname + "/carrier", &state));
    EXPECT_EQ(state, "0\n") << ifname;
    ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/" + ifname + "/operstate", &state));
    EXPECT_EQ(state, "down\n") << ifname;
  }
  EXPECT_EQ(targets.handle_line("netdev 0 1 up"), "ok netdev up");  // no carrier: stays down
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/eth2/operstate", &state));
  EXPECT_EQ(state, "down\n");
  EXPECT_EQ(targets.handle_line("link 0 up"), "ok link up");
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/eth2/carrier", &state));
  EXPECT_EQ(state, "1\n");
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/eth2/operstate", &state));
  EXPECT_EQ(state, "up\n");
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/eth1/operstate", &state));
  EXPECT_EQ(state, "down\n");
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/eth1/speed", &state));
  EXPECT_EQ(state, std::to_string(config.hw.link_speed_mbps) + "\n");
  EXPECT_EQ(targets.handle_line("netdev 0 1 down"), "ok netdev down");

  // A rename: the folder, the /sys/class/net link and later commands follow the new name.
  EXPECT_EQ(targets.handle_line("rename 0 1 enP30832s1"), "ok renamed enP30832s1");
  EXPECT_FALSE(path_exists(pci_device_dir(config, 0) + "/net/eth2"));
  ASSERT_TRUE(read_file(config.root + "/sys/class/net/enP30832s1/dev_port", &state));
  EXPECT_EQ(state, "1\n");
  EXPECT_EQ(targets.handle_line("link 0 down"), "ok link down");
  ASSERT_TRUE(read_file(pci_device_dir(config, 0) + "/net/enP30832s1/carrier", &state));
  EXPECT_EQ(state, "0\n");
  EXPECT_EQ(targets.handle_line("link 0 up"), "ok link up");
  EXPECT_EQ(targets.handle_line("rename 0 0 enP30832s1"),
            "error bad or taken interface name 'enP30832s1' (1..15 characters, unique)");

  EXPECT_EQ(targets.handle_line("fault 0 1 tx error-cqe 35 2"), "ok fault armed");
  EXPECT_EQ(targets.handle_line("fault 0 0 rx bad-lkey 5"), "ok fault armed");
  EXPECT_EQ(targets.handle_line("fault 0 2 rx bad-lkey 5"), "error VF 0 has no port 2");
  ASSERT_EQ(device.faults_.size(), 2u);
  EXPECT_EQ(device.faults_[0].kind, Fault::Kind::kErrorCqe);
  EXPECT_TRUE(device.faults_[0].tx);
  EXPECT_EQ(device.faults_[0].port, 1u);
  EXPECT_EQ(device.faults_[0].cqe_type, 35u);
  EXPECT_EQ(device.faults_[0].count, 2u);
  EXPECT_EQ(device.faults_[1].kind, Fault::Kind::kBadLkey);
  EXPECT_FALSE(device.faults_[1].tx);
  EXPECT_EQ(device.faults_[1].count, 5u);
  EXPECT_EQ(targets.handle_line("fault 0"), parse_error("fault 0").insert(0, "error "));
}

// The kernel's mana_get_stats64 returns before filling rx_missed_errors while the netdev is down
// (doc/hardware.md §2.11): the file shows the VF's drops only for a port whose netdev is up.
TEST(ControlTargets, NetdevStatsShowTheDropsOnlyWhileTheNetdevIsUp) {
  testing::TempDir dir;
  const EmuConfig config = config_in(dir.path());
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(config, &error)) << error;
  FakeDevice device(config.vfs[0]);
  device.ports_[0].rx_no_wqe_drops = 7;
  device.ports_[1].rx_no_wqe_drops = 5;
  ControlTargets targets(config, {});
  targets.add_vf(0, &device);
  const auto missed = [&](const char* ifname) {
    std::string v;
    EXPECT_TRUE(read_file(
        pci_device_dir(config, 0) + "/net/" + ifname + "/statistics/rx_missed_errors", &v));
    return v;
  };
  targets.refresh_netdev_stats();
  EXPECT_EQ(missed("eth1"), "0\n");
  EXPECT_EQ(missed("eth2"), "0\n");
  ASSERT_EQ(targets.handle_line("netdev 0 1 up"), "ok netdev up");
  targets.refresh_netdev_stats();
  EXPECT_EQ(missed("eth1"), "0\n");
  EXPECT_EQ(missed("eth2"), "12\n");  // the function's count: both ports' drops
  ASSERT_EQ(targets.handle_line("netdev 0 1 down"), "ok netdev down");
  targets.refresh_netdev_stats();
  EXPECT_EQ(missed("eth2"), "0\n");
}

TEST(ControlTargets, RemoveAndAddToggleDeviceSysfsAndHook) {
  testing::TempDir dir;
  const EmuConfig config = config_in(dir.path());
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(config, &error)) << error;
  FakeDevice device(config.vfs[0]);
  std::vector<std::pair<uint32_t, bool>> hook_calls;
  ControlHooks hooks;
  hooks.presence_changed = [&](uint32_t vf, bool present) {
    // The device is already in its new state when the verbs layer raises events.
    EXPECT_EQ(device.present(), present);
    hook_calls.emplace_back(vf, present);
  };
  ControlTargets targets(config, hooks);
  targets.add_vf(0, &device);
  EXPECT_EQ(targets.handle_line("add 0"), "error VF 0 is present");
  EXPECT_EQ(targets.handle_line("remove 0"), "ok VF 0 removed");
  EXPECT_FALSE(device.present());
  EXPECT_FALSE(vf_present(config, 0));
  EXPECT_FALSE(path_exists(ib_device_dir(config.root, "mana_0")));
  EXPECT_EQ(targets.handle_line("remove 0"), "error VF 0 is already removed");
  EXPECT_EQ(targets.handle_line("add 0"), "ok VF 0 added");
  EXPECT_TRUE(device.present());
  EXPECT_TRUE(vf_present(config, 0));
  EXPECT_TRUE(path_exists(ib_device_dir(config.root, "mana_0") + "/device/uevent"));
  EXPECT_EQ(device.presence_calls_, (std::vector<bool>{false, true}));
  EXPECT_EQ(hook_calls, (std::vector<std::pair<uint32_t, bool>>{{0, false}, {0, true}}));
}

// The kernel's order at a re-add: the function and its netdev first, mana_ib's RDMA device later.
TEST(ControlTargets, StagedAddBringsTheNetdevBeforeTheRdmaDevice) {
  testing::TempDir dir;
  const EmuConfig config = config_in(dir.path());
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(config, &error)) << error;
  FakeDevice device(config.vfs[0]);
  ControlTargets targets(config, {});
  targets.add_vf(0, &device);
  EXPECT_EQ(parse_ok("add 0 netdev").add_stage, ControlCommand::AddStage::kNetdev);
  EXPECT_EQ(format_control_command(parse_ok("add 0 rdma")), "add 0 rdma");
  EXPECT_EQ(targets.handle_line("add 0 netdev"), "error VF 0 is present");
  ASSERT_EQ(targets.handle_line("remove 0"), "ok VF 0 removed");
  EXPECT_EQ(targets.handle_line("add 0 netdev"), "ok VF 0 netdev added (no RDMA device yet)");
  EXPECT_TRUE(vf_present(config, 0));
  EXPECT_TRUE(vf_rdma_pending(config, 0));
  EXPECT_FALSE(path_exists(ib_device_dir(config.root, "mana_0")));
  EXPECT_FALSE(device.present());  // no context can be opened yet
  EXPECT_EQ(targets.handle_line("add 0 netdev"), "error VF 0 is present");
  EXPECT_EQ(targets.handle_line("add 0 rdma"), "ok VF 0 added");
  EXPECT_TRUE(device.present());
  EXPECT_FALSE(vf_rdma_pending(config, 0));
  EXPECT_TRUE(path_exists(ib_device_dir(config.root, "mana_0") + "/device/uevent"));
  EXPECT_EQ(targets.handle_line("add 0 rdma"), "error VF 0 is present");
  EXPECT_EQ(parse_error("add 0 later"), "usage: add <vf> [netdev|rdma|--pci dddd:bb:dd.f]");
}

// hw netdev-delay-ms and netdev-rename-ms (doc/hardware.md §9.25): `add` brings the PCI function
// back alone (with the presence hook: the kernel's PCI event), then its netdevs under the kernel's
// names (the lowest free eth<k> each), then their names and the RDMA device. Each step waits for
// the time run_due_adds names; no command may move the VF meanwhile.
TEST(ControlTargets, DelayedAddBringsFunctionThenKernelNamedNetdevThenRenameAndRdma) {
  testing::TempDir dir;
  EmuConfig config = config_in(dir.path());
  config.vfs[0].ports[0].ifname = "enP30832s1";
  config.vfs[0].hw.netdev_delay_ms = 5;
  config.vfs[0].hw.netdev_rename_ms = 5;
  config.kernel.mana_ib = true;
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(config, &error)) << error;
  FakeDevice device(config.vfs[0]);
  std::vector<bool> hook_calls;
  ControlHooks hooks;
  hooks.presence_changed = [&](uint32_t, bool present) { hook_calls.push_back(present); };
  ControlTargets targets(config, hooks);
  targets.add_vf(0, &device);
  EXPECT_FALSE(targets.run_due_adds().has_value());
  ASSERT_EQ(targets.handle_line("remove 0"), "ok VF 0 removed");
  EXPECT_EQ(targets.handle_line("add 0"), "ok VF 0 added, its netdevs in 5 ms");
  const std::string net = pci_device_dir(config, 0) + "/net";
  EXPECT_TRUE(vf_present(config, 0));
  EXPECT_FALSE(path_exists(net));
  EXPECT_FALSE(device.present());
  EXPECT_EQ(hook_calls, (std::vector<bool>{false, true}));
  EXPECT_NE(targets.handle_line("remove 0").find("is being added"), std::string::npos);
  EXPECT_NE(targets.handle_line("add 0").find("is being added"), std::string::npos);
  // Step by step: each call runs what is due and names the next time.
  auto step = [&] {
    const auto next = targets.run_due_adds();
    if (next) std::this_thread::sleep_until(*next);
    return next.has_value();
  };
  ASSERT_TRUE(step());                               // the function alone until the first deadline
  ASSERT_TRUE(step());                               // the netdevs, under kernel names
  EXPECT_TRUE(path_exists(net + "/eth0/dev_port"));  // port 0
  EXPECT_TRUE(path_exists(net + "/eth1/dev_port"));  // port 1, whose name (eth2) comes with udev
  EXPECT_FALSE(path_exists(net + "/eth2"));
  EXPECT_FALSE(path_exists(ib_device_dir(config.root, "mana_0")));
  EXPECT_FALSE(device.present());
  EXPECT_FALSE(step());  // renamed, RDMA device there
  EXPECT_TRUE(path_exists(net + "/enP30832s1/dev_port"));
  EXPECT_TRUE(path_exists(net + "/eth2/dev_port"));
  EXPECT_FALSE(path_exists(net + "/eth0"));
  EXPECT_TRUE(path_exists(config.root + "/sys/class/net/enP30832s1/address"));
  EXPECT_FALSE(path_exists(config.root + "/sys/class/net/eth0"));
  EXPECT_TRUE(path_exists(ib_device_dir(config.root, "mana_0") + "/device/uevent"));
  EXPECT_TRUE(device.present());
  EXPECT_EQ(targets.handle_line("remove 0"), "ok VF 0 removed");
}

// Before Linux 6.19 (hw link-events=off) the carrier follows the netdev's state and no NIC link
// event exists; `flags` says whether the netdev is up (IFF_UP) in either case.
TEST(ControlTargets, WithoutLinkEventsTheCarrierFollowsTheNetdev) {
  testing::TempDir dir;
  EmuConfig config = config_in(dir.path());
  config.vfs[0].hw.link_events = false;
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(config, &error)) << error;
  FakeDevice device(config.vfs[0]);
  ControlTargets targets(config, {});
  targets.add_vf(0, &device);
  const std::string eth1 = pci_device_dir(config, 0) + "/net/eth1";
  std::string text;
  ASSERT_TRUE(read_file(eth1 + "/carrier", &text));
  EXPECT_EQ(text, "0\n");
  ASSERT_TRUE(read_file(eth1 + "/flags", &text));
  EXPECT_EQ(text, "0x1002\n");
  EXPECT_EQ(targets.handle_line("netdev 0 0 up"), "ok netdev up");
  ASSERT_TRUE(read_file(eth1 + "/carrier", &text));
  EXPECT_EQ(text, "1\n");
  ASSERT_TRUE(read_file(eth1 + "/flags", &text));
  EXPECT_EQ(text, "0x1003\n");
  EXPECT_EQ(targets.handle_line("netdev 0 0 down"), "ok netdev down");
  ASSERT_TRUE(read_file(eth1 + "/carrier", &text));
  EXPECT_EQ(text, "0\n");
  EXPECT_NE(targets.handle_line("link 0 down").find("link-events=off"), std::string::npos);
}

TEST(ControlTargets, WithoutConfigOnlyTheDeviceChanges) {
  FakeDevice device(two_port_vf());
  ControlTargets targets(std::nullopt, {});
  targets.add_vf(3, &device);
  EXPECT_EQ(targets.handle_line("remove 3"), "ok VF 3 removed");
  EXPECT_FALSE(device.present());
  EXPECT_EQ(targets.handle_line("netdev 3 0 up"), "ok netdev up");
  EXPECT_TRUE(device.netdev_up_[0]);
  targets.drop_vf(3);
  EXPECT_EQ(targets.handle_line("add 3"), "error no such VF 3 (VFs: none)");
}

TEST(ControlTargets, CountersAndLiveAreOneLineOfJson) {
  FakeDevice device(two_port_vf());
  device.ports_[0] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  device.ports_[1] = {10, 20, 30, 40, 50, 60, 70, 80, 90};
  device.bad_doorbells_ = 77;
  device.sq_[7] = {11, 12, 13, 14, 15, 16, 17, 18, 19};
  device.rq_[9] = {21, 22, 23, 24, 25, 26, 27, 28, 29};
  device.live_ = {1, 2, 3, 4, 5, 6, 7};
  ControlHooks hooks;
  hooks.sq_ids = [](uint32_t vf) {
    return vf == 0 ? std::vector<uint32_t>{7} : std::vector<uint32_t>{};
  };
  hooks.rq_ids = [](uint32_t) { return std::vector<uint32_t>{9}; };
  ControlTargets targets(std::nullopt, hooks);
  targets.add_vf(0, &device);
  EXPECT_EQ(targets.handle_line("counters 0"),
            "ok {\"vf\":0,\"present\":true,\"bad_doorbells\":77,\"ports\":["
            "{\"port\":0,\"tx_frames\":4,\"rx_frames\":5,\"rx_no_wqe_drops\":1,\"rx_filtered\":2,"
            "\"rx_mtu_drops\":3,\"tx_wire_drops\":6,\"rx_oversize\":7,"
            "\"rx_stale_steering_drops\":8,\"rx_stale_steering_cqes\":9},"
            "{\"port\":1,\"tx_frames\":40,\"rx_frames\":50,\"rx_no_wqe_drops\":10,"
            "\"rx_filtered\":20,\"rx_mtu_drops\":30,\"tx_wire_drops\":60,\"rx_oversize\":70,"
            "\"rx_stale_steering_drops\":80,\"rx_stale_steering_cqes\":90}],"
            "\"sqs\":[{\"id\":7,\"wqes\":11,\"packets\":12,\"bytes\":13,\"cqes\":15,"
            "\"error_cqes\":14,\"doorbells\":16,\"wqe_cnt_doorbells\":17,"
            "\"zero_length_cqes\":18,\"cq_doorbell_violations\":19}],"
            "\"rqs\":[{\"id\":9,\"wqes\":21,\"packets\":22,\"bytes\":23,\"cqes\":25,"
            "\"error_cqes\":24,\"doorbells\":26,\"wqe_cnt_doorbells\":27,"
            "\"zero_length_cqes\":28,\"cq_doorbell_violations\":29}]}");
  EXPECT_EQ(targets.handle_line("live 0"),
            "ok {\"pds\":1,\"mrs\":2,\"cqs\":3,\"wqs\":4,\"sqs\":5,\"rss_qps\":6,\"contexts\":7}");
  ControlTargets no_hooks(std::nullopt, {});
  no_hooks.add_vf(0, &device);
  const std::string reply = no_hooks.handle_line("counters 0");
  EXPECT_NE(reply.find("\"sqs\":[],\"rqs\":[]}"), std::string::npos) << reply;
  // The synthetic NIC's counters come from the hook (emu/vmbus); without one there is none.
  EXPECT_EQ(no_hooks.handle_line("netvsc-counters 0 1"),
            "error VF 0 port 1 has no synthetic NIC (mana-emu run --uio-netvsc)");
  EXPECT_EQ(no_hooks.handle_line("netvsc-counters 0 2"), "error VF 0 has no port 2");
  ControlHooks nic_hooks;
  nic_hooks.netvsc_counters = [](uint32_t vf, uint32_t port) {
    return "ok {\"vf\":" + std::to_string(vf) + ",\"port\":" + std::to_string(port) + "}";
  };
  ControlTargets with_nic(std::nullopt, nic_hooks);
  with_nic.add_vf(0, &device);
  EXPECT_EQ(with_nic.handle_line("netvsc-counters 0 1"), "ok {\"vf\":0,\"port\":1}");
}

TEST(ControlServer, ServesCommandsOverTheSocket) {
  testing::TempDir dir;
  const EmuConfig config = config_in(dir.path());
  FakeDevice device(config.vfs[0]);
  ControlServer server(std::nullopt, {});
  server.add_vf(0, &device);
  std::string error, reply;
  ASSERT_TRUE(server.start(config.control, &error)) << error;
  ASSERT_TRUE(send_control_command(config.control, "netdev 0 1 up", kTimeoutMs, &reply, &error))
      << error;
  EXPECT_EQ(reply, "ok netdev up");
  EXPECT_TRUE(device.netdev_up_[1]);
  ASSERT_TRUE(send_control_command(config.control, "frobnicate", kTimeoutMs, &reply, &error));
  EXPECT_EQ(reply.rfind("error unknown command 'frobnicate'", 0), 0u) << reply;

  // A second server on the same path is refused while the first one serves it.
  ControlServer second(std::nullopt, {});
  EXPECT_FALSE(second.start(config.control, &error));
  EXPECT_NE(error.find("already served"), std::string::npos) << error;

  server.stop();
  EXPECT_FALSE(path_exists(config.control));
  EXPECT_FALSE(send_control_command(config.control, "live 0", kTimeoutMs, &reply, &error));
}

TEST(ControlServer, AnswersEveryLineOfOneConnectionAndReplacesAStaleSocket) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/control.sock";
  // Leave a socket file nobody listens on, as a crashed owner would.
  int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr;
  std::string error;
  ASSERT_TRUE(unix_address(path, &addr, &error));
  ASSERT_EQ(::bind(stale, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(stale);
  ASSERT_TRUE(path_exists(path));

  FakeDevice device(two_port_vf());
  ControlServer server(std::nullopt, {});
  server.add_vf(0, &device);
  ASSERT_TRUE(server.start(path, &error)) << error;
  int fd = connect_unix(path, &error);
  ASSERT_GE(fd, 0) << error;
  ASSERT_TRUE(send_all(fd, "netdev 0 0 up\nlive 0\nfault 0 1 rx bad"));
  ASSERT_TRUE(send_all(fd, "-lkey 2\n"));
  std::string got;
  while (std::count(got.begin(), got.end(), '\n') < 3) {
    char buf[256];
    struct pollfd p = {fd, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, kTimeoutMs), 1) << "no reply within the timeout; got: " << got;
    ssize_t n = ::read(fd, buf, sizeof(buf));
    ASSERT_GT(n, 0);
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  EXPECT_EQ(got,
            "ok netdev up\n"
            "ok {\"pds\":0,\"mrs\":0,\"cqs\":0,\"wqs\":0,\"sqs\":0,\"rss_qps\":0,\"contexts\":0}\n"
            "ok fault armed\n");
  ASSERT_EQ(device.faults_.size(), 1u);
  EXPECT_EQ(device.faults_[0].count, 2u);
}

}  // namespace
}  // namespace mana::emu
