// SPDX-License-Identifier: BSD-3-Clause
// The sysfs contract of doc/hardware.md §2.2 on a generated tree: PCI address from uevent, port
// netdevs, their link (speed, carrier) also after a rename.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "ib_sysfs.h"
#include "link_state.h"
#include "priv.h"

namespace {

namespace fs = std::filesystem;

class IbSysfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/unit-pmd-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ / "device" / "net");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  void add_netdev(const std::string& ifname, unsigned dev_port, const std::string& mac) {
    write("device/net/" + ifname + "/dev_port", std::to_string(dev_port) + "\n");
    write("device/net/" + ifname + "/address", mac + "\n");
  }
  const char* path() const { return root_.c_str(); }

  fs::path root_;
};

TEST_F(IbSysfsTest, PciSlotNameFromUevent) {
  write("device/uevent", "DRIVER=mana\nPCI_CLASS=20000\nPCI_SLOT_NAME=7870:00:00.0\nMODALIAS=x\n");
  rte_pci_addr a{};
  ASSERT_EQ(mana::ib_device_pci_addr(path(), &a), 0);
  EXPECT_EQ(a.domain, 0x7870u);
  EXPECT_EQ(a.bus, 0);
  EXPECT_EQ(a.devid, 0);
  EXPECT_EQ(a.function, 0);
}

TEST_F(IbSysfsTest, MissingPciSlotNameIsNotAMatch) {
  write("device/uevent", "DRIVER=mana\nPCI_CLASS=20000\n");
  rte_pci_addr a{};
  EXPECT_EQ(mana::ib_device_pci_addr(path(), &a), -ENOENT);
  fs::remove(root_ / "device" / "uevent");
  EXPECT_EQ(mana::ib_device_pci_addr(path(), &a), -ENOENT);
  write("device/uevent", "PCI_SLOT_NAME=garbage\n");
  EXPECT_EQ(mana::ib_device_pci_addr(path(), &a), -EINVAL);
}

TEST_F(IbSysfsTest, PortIsTheNetdevWithDevPortMinusOne) {
  add_netdev("eth2", 1, "00:0d:3a:00:00:02");
  add_netdev("eth1", 0, "00:0d:3a:00:00:01");
  mana::PortNetdev nd{};
  ASSERT_EQ(mana::ib_port_netdev(path(), 1, &nd), 0);
  EXPECT_STREQ(nd.ifname, "eth1");
  EXPECT_EQ(nd.mac.addr_bytes[5], 1);
  ASSERT_EQ(mana::ib_port_netdev(path(), 2, &nd), 0);
  EXPECT_STREQ(nd.ifname, "eth2");
  EXPECT_EQ(nd.mac.addr_bytes[5], 2);
  EXPECT_EQ(mana::ib_port_netdev(path(), 3, &nd), -ENOENT);
}

// Recovery finds a re-added VF by the port's MAC: the IB port is dev_port + 1.
TEST_F(IbSysfsTest, PortByMac) {
  add_netdev("eth4", 1, "00:0d:3a:00:00:02");
  add_netdev("eth3", 0, "00:0d:3a:00:00:01");
  mana::PortNetdev nd{};
  unsigned port = 0;
  const rte_ether_addr second{{0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02}};
  ASSERT_EQ(mana::ib_port_by_mac(path(), second, &port, &nd), 0);
  EXPECT_EQ(port, 2u);
  EXPECT_STREQ(nd.ifname, "eth4");
  const rte_ether_addr other{{0x00, 0x0d, 0x3a, 0x00, 0x00, 0x09}};
  EXPECT_EQ(mana::ib_port_by_mac(path(), other, &port, &nd), -ENOENT);
}

TEST_F(IbSysfsTest, UnreadableNetdevIsSkipped) {
  write("device/net/eth9/dev_port", "0\n");  // no address file
  write("device/net/eth8/address", "00:0d:3a:00:00:08\n");
  add_netdev("eth7", 0, "not-a-mac");
  mana::PortNetdev nd{};
  EXPECT_EQ(mana::ib_port_netdev(path(), 1, &nd), -ENOENT);
}

TEST_F(IbSysfsTest, ListOfMacsNamesEveryPort) {
  add_netdev("eth1", 0, "00:0d:3a:00:00:01");
  add_netdev("eth2", 1, "00:0d:3a:00:00:02");
  char buf[256];
  mana::list_port_macs(path(), buf, sizeof(buf));
  const std::string s = buf;
  EXPECT_NE(s.find("eth1 00:0D:3A:00:00:01"), std::string::npos) << s;
  EXPECT_NE(s.find("eth2 00:0D:3A:00:00:02"), std::string::npos) << s;
  mana::list_port_macs(path(), buf, 8);  // truncation never overruns
  EXPECT_LT(std::strlen(buf), 8u);
}

TEST(NetdevLinkText, SpeedAndCarrierAsTheKernelWritesThem) {
  EXPECT_EQ(mana::parse_netdev_speed("25000\n"), 25000);
  EXPECT_EQ(mana::parse_netdev_speed("-1\n"), -1);  // SPEED_UNKNOWN
  EXPECT_EQ(mana::parse_netdev_speed("0\n"), -1);
  EXPECT_EQ(mana::parse_netdev_speed(""), -1);
  EXPECT_EQ(mana::parse_netdev_speed("fast"), -1);
  EXPECT_EQ(mana::parse_netdev_carrier("1\n"), 1);
  EXPECT_EQ(mana::parse_netdev_carrier("0\n"), 0);
  EXPECT_EQ(mana::parse_netdev_carrier("2\n"), -1);
  EXPECT_EQ(mana::parse_netdev_carrier(""), -1);
}

// The carrier flag of a netdev that is down (rtnetlink): since Linux 6.19 on from probe and
// following the NIC's link events; before, off with the netdev. A 0 means "link down" only once
// the netdev has shown 1.
TEST(NetdevLinkText, DownNetdevCarrierCountsOnlyAfterItWasOn) {
  bool seen_on = false;
  EXPECT_EQ(mana::down_netdev_carrier(0, &seen_on), -1);  // a kernel before 6.19, or no news
  EXPECT_EQ(mana::down_netdev_carrier(-1, &seen_on), -1);
  EXPECT_FALSE(seen_on);
  EXPECT_EQ(mana::down_netdev_carrier(1, &seen_on), 1);
  EXPECT_TRUE(seen_on);
  EXPECT_EQ(mana::down_netdev_carrier(0, &seen_on), 0);  // the NIC's link event
  EXPECT_EQ(mana::down_netdev_carrier(-1, &seen_on), -1);
  EXPECT_EQ(mana::down_netdev_carrier(1, &seen_on), 1);
}

// The port's netdev is found by dev_port at each read: a rename after probe is followed (and the
// port's name for it changes), a netdev without speed and carrier files (down: the kernel answers
// EINVAL) reads as unknown when neither ethtool nor rtnetlink know its name (names no host has).
TEST_F(IbSysfsTest, LinkFollowsTheNetdevThroughARename) {
  add_netdev("manatest1", 0, "00:0d:3a:00:00:01");
  write("device/net/manatest1/speed", "25000\n");
  write("device/net/manatest1/carrier", "1\n");
  auto* priv = new mana::PortPriv{};
  priv->ib_port = 1;
  snprintf(priv->ibdev_path, sizeof(priv->ibdev_path), "%s", path());
  snprintf(priv->ifname, sizeof(priv->ifname), "manatest1");
  mana::NetdevLink l = mana::netdev_link_read(*priv);
  EXPECT_EQ(l.speed_mbps, 25000);
  EXPECT_EQ(l.carrier, 1);
  fs::rename(root_ / "device/net/manatest1", root_ / "device/net/manatest2");
  write("device/net/manatest2/carrier", "0\n");
  l = mana::netdev_link_read(*priv);
  EXPECT_EQ(l.speed_mbps, 25000);
  EXPECT_EQ(l.carrier, 0);
  EXPECT_STREQ(priv->ifname, "manatest2");
  fs::remove(root_ / "device/net/manatest2/speed");
  fs::remove(root_ / "device/net/manatest2/carrier");
  l = mana::netdev_link_read(*priv);
  EXPECT_EQ(l.speed_mbps, -1);
  EXPECT_EQ(l.carrier, -1);
  delete priv;
}

}  // namespace
