// SPDX-License-Identifier: BSD-3-Clause
#include "tool/run_options.h"

#include <gtest/gtest.h>

#include "config/fs_util.h"
#include "temp_dir.h"
#include "tool/preload_path.h"

namespace mana::emu {
namespace {

RunOptions parse_ok(std::vector<std::string> args) {
  RunOptions opts;
  std::string error;
  EXPECT_TRUE(parse_run_options(args, &opts, &error)) << error;
  return opts;
}

std::string parse_error(std::vector<std::string> args) {
  RunOptions opts;
  std::string error;
  EXPECT_FALSE(parse_run_options(args, &opts, &error));
  return error;
}

TEST(RunOptions, DefaultsAreOneVfWithOneLoopPort) {
  const RunOptions o = parse_ok({"--", "/bin/true", "x"});
  EXPECT_EQ(o.command, (std::vector<std::string>{"/bin/true", "x"}));
  EXPECT_FALSE(o.keep);
  EXPECT_FALSE(o.lockstep);
  EXPECT_TRUE(o.preload.empty());
  EXPECT_EQ(o.config.doorbell, EmuConfig::kTrap);
  EXPECT_EQ(o.config.limits, EmuConfig::kLimits6_2);
  EXPECT_FALSE(o.config.device_split);
  ASSERT_EQ(o.config.vfs.size(), 1u);
  const VfConfig& vf = o.config.vfs[0];
  EXPECT_EQ(vf.pci_addr, "7870:00:00.0");
  EXPECT_FALSE(vf.rx_coalescing);
  EXPECT_TRUE(vf.anti_spoof);  // Azure's vPort enforces the source MAC
  EXPECT_EQ(vf.limits.max_qp_wr, 256u);
  ASSERT_EQ(vf.ports.size(), 1u);
  EXPECT_EQ(format_mac(vf.ports[0].mac), "00:0d:3a:00:00:01");
  EXPECT_EQ(vf.ports[0].ifname, "eth1");
  EXPECT_EQ(vf.ports[0].wire, "loop");
  EXPECT_FALSE(vf.ports[0].netdev_up);
}

TEST(RunOptions, VfOptionsApplyToTheMostRecentVf) {
  const RunOptions o = parse_ok({"--ports",
                                 "2",
                                 "--wire",
                                 "pair",
                                 "--vf",
                                 "7870:00:05.0",
                                 "--netdev-up=1",
                                 "--vf=7870:00:06.0",
                                 "--ports=3",
                                 "--mac",
                                 "02:00:00:00:00:0a",
                                 "--ifname",
                                 "up0",
                                 "--wire",
                                 "null",
                                 "--wire",
                                 "tap:t1",
                                 "--wire",
                                 "shm:s",
                                 "--doorbell",
                                 "poll",
                                 "--coalesce",
                                 "on",
                                 "--limits",
                                 "2025",
                                 "--device-split",
                                 "--anti-spoof",
                                 "off",
                                 "--keep",
                                 "--lockstep",
                                 "--preload",
                                 "/x.so",
                                 "cmd",
                                 "--not-an-option"});
  EXPECT_EQ(o.command, (std::vector<std::string>{"cmd", "--not-an-option"}));
  EXPECT_TRUE(o.keep);
  EXPECT_TRUE(o.lockstep);
  EXPECT_EQ(o.preload, "/x.so");
  EXPECT_EQ(o.config.doorbell, EmuConfig::kPoll);
  EXPECT_EQ(o.config.limits, EmuConfig::kLimits2025);
  EXPECT_TRUE(o.config.device_split);
  ASSERT_EQ(o.config.vfs.size(), 2u);
  const VfConfig& a = o.config.vfs[0];
  EXPECT_EQ(a.pci_addr, "7870:00:05.0");
  EXPECT_TRUE(a.rx_coalescing);
  EXPECT_FALSE(a.anti_spoof);
  EXPECT_EQ(a.limits.max_cqe, 2048u);
  ASSERT_EQ(a.ports.size(), 2u);
  EXPECT_EQ(a.ports[0].wire, "pair");
  EXPECT_EQ(a.ports[1].wire, "pair");
  EXPECT_FALSE(a.ports[0].netdev_up);
  EXPECT_TRUE(a.ports[1].netdev_up);
  EXPECT_EQ(a.ports[0].ifname, "eth1");
  EXPECT_EQ(a.ports[1].ifname, "eth2");
  EXPECT_EQ(format_mac(a.ports[1].mac), "00:0d:3a:00:00:02");
  const VfConfig& b = o.config.vfs[1];
  EXPECT_EQ(b.pci_addr, "7870:00:06.0");
  ASSERT_EQ(b.ports.size(), 3u);
  EXPECT_EQ(format_mac(b.ports[0].mac), "02:00:00:00:00:0a");
  EXPECT_EQ(format_mac(b.ports[1].mac), "00:0d:3a:00:01:02");
  EXPECT_EQ(format_mac(b.ports[2].mac), "00:0d:3a:00:01:03");
  EXPECT_EQ(b.ports[0].ifname, "up0");
  EXPECT_EQ(b.ports[1].ifname, "eth4");
  EXPECT_EQ(b.ports[2].ifname, "eth5");
  EXPECT_EQ(b.ports[0].wire, "null");
  EXPECT_EQ(b.ports[1].wire, "tap:t1");
  EXPECT_EQ(b.ports[2].wire, "shm:s");
  EXPECT_TRUE(b.rx_coalescing);
}

TEST(RunOptions, IpPerPortOfTheCurrentVf) {
  const RunOptions o =
      parse_ok({"--vf", "7870:00:00.0", "--ports", "2", "--wire", "fabric:az", "--ip", "198.18.0.1",
                "--ip=198.18.0.2", "--vf", "7870:00:01.0", "--wire", "fabric:az", "--ip",
                "198.18.0.3", "--anti-spoof", "on", "--", "x"});
  ASSERT_EQ(o.config.vfs.size(), 2u);
  EXPECT_EQ(format_ipv4(o.config.vfs[0].ports[0].ipv4), "198.18.0.1");
  EXPECT_EQ(format_ipv4(o.config.vfs[0].ports[1].ipv4), "198.18.0.2");
  EXPECT_EQ(format_ipv4(o.config.vfs[1].ports[0].ipv4), "198.18.0.3");
  EXPECT_TRUE(o.config.vfs[1].anti_spoof);
}

TEST(RunOptions, KernelSetupFaultsAndNetvscNames) {
  const RunOptions d = parse_ok({"--", "x"});
  EXPECT_TRUE(d.config.kernel.mana_ib);
  EXPECT_TRUE(d.config.kernel.ib_uverbs);
  EXPECT_EQ(d.config.kernel.driver_id, kRdmaDriverMana);
  EXPECT_EQ(d.config.vfs[0].ports[0].netvsc, "");
  const RunOptions o =
      parse_ok({"--ports", "2", "--netvsc", "eth1", "--ifname", "enP1p0s0", "--ifname", "enP1p0s1",
                "--no-module", "mana_ib", "--no-module=ib_uverbs", "--driver-id", "19", "--", "x"});
  EXPECT_FALSE(o.config.kernel.mana_ib);
  EXPECT_FALSE(o.config.kernel.ib_uverbs);
  EXPECT_EQ(o.config.kernel.driver_id, 19u);
  EXPECT_EQ(o.config.vfs[0].ports[0].netvsc, "eth1");
  EXPECT_EQ(o.config.vfs[0].ports[1].netvsc, "");
  EXPECT_EQ(parse_error({"--no-module", "mana", "--", "x"}),
            "--no-module 'mana': expected mana_ib or ib_uverbs");
  EXPECT_EQ(parse_error({"--driver-id", "300", "--", "x"}), "--driver-id '300': expected 0..255");
  EXPECT_EQ(parse_error({"--ports", "2", "--ifname", "a0", "--ifname", "a1", "--netvsc", "s",
                         "--netvsc", "s", "--", "x"}),
            "--vf 7870:00:00.0 port 1: duplicate ifname s");
  EXPECT_EQ(parse_error({"--netvsc", "eth1", "--", "x"}),
            "--vf 7870:00:00.0 port 0: duplicate ifname eth1");  // the VF netdev's default name
}

TEST(RunOptions, UioNetvscNamesPortsOfTheCurrentVf) {
  const RunOptions o = parse_ok({"--vf", "7870:00:00.0", "--ports", "2", "--uio-netvsc", "1",
                                 "--vf", "7870:00:01.0", "--uio-netvsc=0", "--", "x"});
  ASSERT_EQ(o.config.vfs.size(), 2u);
  EXPECT_FALSE(o.config.vfs[0].ports[0].uio_netvsc);
  EXPECT_TRUE(o.config.vfs[0].ports[1].uio_netvsc);
  EXPECT_TRUE(o.config.vfs[1].ports[0].uio_netvsc);
  EXPECT_EQ(parse_error({"--uio-netvsc", "1", "--", "x"}),
            "--vf 7870:00:00.0: --uio-netvsc 1 but the VF has 1 port(s)");
  EXPECT_EQ(parse_error({"--netvsc", "seth0", "--uio-netvsc", "0", "--", "x"}),
            "--vf 7870:00:00.0 port 0: a synthetic NIC is bound to hv_netvsc (netvsc) or to "
            "uio_hv_generic (uio_netvsc), not both");
}

TEST(RunOptions, ErrorsAreOneClearLine) {
  EXPECT_EQ(parse_error({"--mac", "00:0d:3a:00:00", "--", "x"}),
            "--mac '00:0d:3a:00:00': expected a MAC address aa:bb:cc:dd:ee:ff");
  EXPECT_EQ(parse_error({"--ports", "9", "--", "x"}), "--ports 9: at most 8 ports per VF");
  EXPECT_EQ(parse_error({"--ports", "0", "--", "x"}), "--ports '0': expected a number of ports");
  EXPECT_EQ(parse_error({"--vf", "7870:00:01.0", "--vf", "7870:00:01.0", "--", "x"}),
            "--vf 7870:00:01.0: duplicate PCI address 7870:00:01.0");
  EXPECT_EQ(parse_error({"--vf", "bogus", "--", "x"}),
            "--vf 'bogus': expected a PCI address dddd:bb:dd.f");
  EXPECT_EQ(parse_error({"--wire", "fiber", "--", "x"}),
            "--wire: unknown wire 'fiber' (loop, pair, null, tap:<ifname>, shm:<name>, "
            "fabric:<name>)");
  EXPECT_EQ(parse_error({"--anti-spoof", "--", "x"}), "--anti-spoof '--': expected on or off");
  EXPECT_EQ(parse_error({"--ip", "198.18.0", "--", "x"}),
            "--ip '198.18.0': expected an IPv4 address A.B.C.D");
  EXPECT_EQ(parse_error({"--wire", "fabric:az", "--", "x"}),
            "--vf 7870:00:00.0 port 0: wire fabric:az needs the port's IPv4 address (--ip "
            "A.B.C.D, or ip= in the port record)");
  EXPECT_EQ(parse_error({"--ip", "198.18.0.1", "--ip", "198.18.0.2", "--", "x"}),
            "--vf 7870:00:00.0: 2 --ip for 1 port(s)");
  EXPECT_EQ(parse_error({"--wire", "pair", "--", "x"}),
            "--vf 7870:00:00.0 port 0: wire pair joins ports 0 and 1 of a VF: both need "
            "wire=pair");
  EXPECT_EQ(parse_error({"--ports", "2", "--wire", "tap:t0", "--", "x"}),
            "--vf 7870:00:00.0 port 1: wire tap:t0 is used by another port (one TAP per port)");
  EXPECT_EQ(parse_error({"--ports", "3", "--wire", "loop", "--wire", "null", "--", "x"}),
            "--vf 7870:00:00.0: give one --wire for all ports or one per port (3)");
  EXPECT_EQ(parse_error({"--mac", "02:00:00:00:00:01", "--mac", "02:00:00:00:00:02", "--", "x"}),
            "--vf 7870:00:00.0: 2 --mac for 1 port(s)");
  EXPECT_EQ(parse_error({"--ifname", "a", "--ifname", "b", "--", "x"}),
            "--vf 7870:00:00.0: 2 --ifname for 1 port(s)");
  EXPECT_EQ(parse_error({"--netdev-up", "1", "--", "x"}),
            "--vf 7870:00:00.0: --netdev-up 1 but the VF has 1 port(s)");
  EXPECT_EQ(parse_error({"--doorbell", "mmio", "--", "x"}),
            "--doorbell 'mmio': expected trap or poll");
  EXPECT_EQ(parse_error({"--coalesce", "yes", "--", "x"}), "--coalesce 'yes': expected on or off");
  EXPECT_EQ(parse_error({"--limits", "6.5", "--", "x"}), "--limits '6.5': expected 6.2 or 2025");
  EXPECT_EQ(parse_error({"--device-cpu", "one", "--", "x"}),
            "--device-cpu 'one': expected a CPU number");
  EXPECT_EQ(parse_error({"--keep=1", "--", "x"}), "--keep takes no value");
  EXPECT_EQ(parse_error({"--lockstep=1", "--", "x"}), "--lockstep takes no value");
  EXPECT_EQ(parse_error({"--ports"}), "--ports needs a value");
  EXPECT_EQ(parse_error({"--frobnicate", "--", "x"}),
            "unknown option --frobnicate (see mana-emu --help)");
  EXPECT_EQ(parse_error({"--keep", "--"}),
            "no command to run (mana-emu run [options] -- <command> [args])");
  EXPECT_EQ(parse_error({"--mac", "01:00:5e:00:00:01", "--", "x"}),
            "--vf 7870:00:00.0 port 0: MAC 01:00:5e:00:00:01 is a multicast address");
  EXPECT_EQ(parse_error({"--ports", "2", "--mac", "02:00:00:00:00:01", "--mac", "02:00:00:00:00:01",
                         "--", "x"}),
            "--vf 7870:00:00.0 port 1: duplicate MAC 02:00:00:00:00:01");
  EXPECT_EQ(
      parse_error({"--ifname", "eth2", "--vf", "7870:00:00.0", "--vf", "7870:00:01.0", "--", "x"}),
      "--vf 7870:00:01.0 port 0: duplicate ifname eth2");
}

TEST(PreloadPath, FindsTheBuildTreeLibraryThenTheInstalledOne) {
  testing::TempDir dir;
  std::string error;
  const std::string build = dir.path() + "/build";
  const std::string libdir = dir.path() + "/lib";
  ASSERT_TRUE(make_dirs(build + "/emu/tool", &error) && make_dirs(build + "/emu/preload", &error) &&
              make_dirs(libdir, &error))
      << error;
  const std::string exe = build + "/emu/tool/mana-emu";
  EXPECT_EQ(find_preload(exe, libdir, &error), "");
  EXPECT_NE(error.find("cannot find libmana_emu.so"), std::string::npos) << error;
  ASSERT_TRUE(write_file(libdir + "/libmana_emu.so", "", &error));
  EXPECT_EQ(find_preload(exe, libdir, &error), libdir + "/libmana_emu.so");
  ASSERT_TRUE(write_file(build + "/emu/preload/libmana_emu.so", "", &error));
  EXPECT_EQ(find_preload(exe, libdir, &error), build + "/emu/preload/libmana_emu.so");
}

TEST(PreloadPath, RejectsMissingFilesAndPathsLdPreloadCannotHold) {
  testing::TempDir dir;
  std::string error;
  EXPECT_EQ(checked_preload(dir.path() + "/none.so", &error), "");
  EXPECT_NE(error.find("not found"), std::string::npos) << error;
  const std::string spaced = dir.path() + "/a b.so";
  ASSERT_TRUE(write_file(spaced, "", &error));
  EXPECT_EQ(checked_preload(spaced, &error), "");
  EXPECT_NE(error.find("contains a space"), std::string::npos) << error;
  ASSERT_TRUE(write_file(dir.path() + "/ok.so", "", &error));
  EXPECT_EQ(checked_preload(dir.path() + "/./ok.so", &error), dir.path() + "/ok.so");
}

}  // namespace
}  // namespace mana::emu
