// SPDX-License-Identifier: BSD-3-Clause
// The MTU through the kernel netdev (doc/hardware.md §2.9): the limits dev_info reports from the
// netdev's max MTU, mtu_set and dev_configure writing the netdev's `mtu` file, the RX-buffer rule,
// and the rtnetlink answer the max MTU comes from.
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include <ethdev_driver.h>
#include <gtest/gtest.h>

#include "ethdev_ops.h"
#include "netdev_mtu.h"
#include "priv.h"

namespace {

using namespace mana;

class MtuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    priv_.caps = DeviceCaps{64, 256, 256, 15, 0x7FFFFFFF, UINT64_MAX};
    priv_.max_mtu = 9000;
    char tmpl[] = "/tmp/mana-pmd-mtu-XXXXXX";
    const int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "1500\n", 5), 5);
    close(fd);
    snprintf(priv_.mtu_path, sizeof(priv_.mtu_path), "%s", tmpl);
    snprintf(priv_.ifname, sizeof(priv_.ifname), "eth1");
    data_.dev_private = &priv_;
    data_.mtu = 1500;
    dev_.data = &data_;
    ops_ = primary_dev_ops();
  }
  void TearDown() override { unlink(priv_.mtu_path); }
  std::string netdev_mtu() {
    std::ifstream f(priv_.mtu_path);
    std::string v;
    f >> v;
    return v;
  }

  PortPriv priv_{};
  rte_eth_dev_data data_{};
  rte_eth_dev dev_{};
  const eth_dev_ops* ops_ = nullptr;
};

// testpmd turns --max-pkt-len into an MTU by subtracting max_rx_pktlen - max_mtu: 14, so LISA's
// --max-pkt-len=9000 gives MTU 8986 and its 9000-byte --txpkts frames fit it.
TEST_F(MtuTest, DevInfoReportsTheNetdevMaxMtu) {
  for (uint32_t max : {1500u, 9000u}) {
    priv_.max_mtu = max;
    rte_eth_dev_info info{};
    ASSERT_EQ(ops_->dev_infos_get(&dev_, &info), 0);
    EXPECT_EQ(info.min_mtu, 68u);
    EXPECT_EQ(info.max_mtu, max);
    EXPECT_EQ(info.max_rx_pktlen, max + 14);
  }
}

TEST_F(MtuTest, MtuSetWritesTheNetdevUpToItsMaxMtu) {
  for (uint16_t mtu : {uint16_t{68}, uint16_t{4000}, uint16_t{9000}, uint16_t{1500}}) {
    EXPECT_EQ(ops_->mtu_set(&dev_, mtu), 0) << mtu;
    EXPECT_EQ(netdev_mtu(), std::to_string(mtu));
  }
  for (uint32_t max : {9000u, 1500u}) {
    priv_.max_mtu = max;
    for (uint16_t mtu : {uint16_t{67}, static_cast<uint16_t>(max + 1), uint16_t{9216}}) {
      EXPECT_EQ(ops_->mtu_set(&dev_, mtu), -EINVAL) << mtu;
      EXPECT_EQ(netdev_mtu(), "1500");
    }
  }
}

TEST_F(MtuTest, MtuSetRefusesAnMtuTheRxBuffersCannotHold) {
  auto q = std::make_unique<RxQueue>();
  q->buf_len = 2048;
  void* queues[1] = {q.get()};
  data_.rx_queues = queues;
  data_.nb_rx_queues = 1;
  EXPECT_EQ(ops_->mtu_set(&dev_, 2048 - 14), 0);
  EXPECT_EQ(ops_->mtu_set(&dev_, 2048 - 13), -EINVAL);
  EXPECT_EQ(netdev_mtu(), "2034");
  data_.rx_queues = nullptr;
  data_.nb_rx_queues = 0;
}

// Under an owner (DPDK's netvsc PMD sets its MTU on the VF it adds again after a servicing, and a
// refusal there loses the VF) the same MTU is taken: longer frames are dropped and counted.
TEST_F(MtuTest, AnOwnedPortTakesAnMtuTheRxBuffersCannotHold) {
  auto q = std::make_unique<RxQueue>();
  q->buf_len = 2048;
  void* queues[1] = {q.get()};
  data_.rx_queues = queues;
  data_.nb_rx_queues = 1;
  data_.owner.id = 7;
  snprintf(data_.owner.name, sizeof(data_.owner.name), "netvsc-uuid");
  rte_eth_dev_data* const saved = rte_eth_devices[data_.port_id].data;
  rte_eth_devices[data_.port_id].data = &data_;  // where ethdev keeps the owner
  EXPECT_EQ(ops_->mtu_set(&dev_, 4000), 0);
  EXPECT_EQ(netdev_mtu(), "4000");
  data_.owner.id = RTE_ETH_DEV_NO_OWNER;
  EXPECT_EQ(ops_->mtu_set(&dev_, 4001), -EINVAL);
  rte_eth_devices[data_.port_id].data = saved;
  data_.rx_queues = nullptr;
  data_.nb_rx_queues = 0;
}

TEST_F(MtuTest, ConfigureSetsTheNetdevToTheEthdevMtu) {
  data_.nb_tx_queues = 1;
  data_.mtu = 8986;  // what ethdev set from rxmode.mtu before calling dev_configure
  EXPECT_EQ(ops_->dev_configure(&dev_), 0);
  EXPECT_EQ(netdev_mtu(), "8986");
  // A netdev the driver cannot write fails the configure (one error line).
  snprintf(priv_.mtu_path, sizeof(priv_.mtu_path), "/nonexistent/mtu");
  data_.mtu = 4000;
  EXPECT_EQ(ops_->dev_configure(&dev_), -ENOENT);
}

// An RTM_NEWLINK answer with the attributes of a netdev.
struct LinkAnswer {
  alignas(4) unsigned char buf[256] = {};
  size_t len = NLMSG_LENGTH(sizeof(ifinfomsg));
  LinkAnswer() {
    auto* h = reinterpret_cast<nlmsghdr*>(buf);
    h->nlmsg_type = RTM_NEWLINK;
    h->nlmsg_len = static_cast<uint32_t>(len);
  }
  // One attribute of the value's own size (u8 or u32, as the kernel sends each).
  template <class T>
  void add(uint16_t type, T v) {
    auto* a = reinterpret_cast<rtattr*>(buf + NLMSG_ALIGN(len));
    a->rta_type = type;
    a->rta_len = RTA_LENGTH(sizeof(v));
    std::memcpy(RTA_DATA(a), &v, sizeof(v));
    len = NLMSG_ALIGN(len) + RTA_ALIGN(a->rta_len);
    reinterpret_cast<nlmsghdr*>(buf)->nlmsg_len = static_cast<uint32_t>(len);
  }
  void add_u8(uint16_t type, uint8_t v) { add(type, v); }
  void add_u32(uint16_t type, uint32_t v) { add(type, v); }
};

TEST(ParseLinkReply, ReadsMtuAndMaxMtuOrTheKernelsError) {
  LinkAnswer a;
  a.add_u32(IFLA_TXQLEN, 1000);
  a.add_u32(IFLA_MTU, 1500);
  a.add_u32(IFLA_MAX_MTU, 9000);
  LinkAttrs out;
  ASSERT_EQ(parse_link_reply(a.buf, a.len, &out), 0);
  EXPECT_EQ(out.mtu, 1500u);
  EXPECT_EQ(out.max_mtu, 9000u);
  EXPECT_EQ(parse_link_reply(a.buf, 8, &out), -EBADMSG);  // truncated

  LinkAnswer old_kernel;  // no IFLA_MAX_MTU
  old_kernel.add_u32(IFLA_MTU, 1500);
  ASSERT_EQ(parse_link_reply(old_kernel.buf, old_kernel.len, &out), 0);
  EXPECT_EQ(out.max_mtu, 0u);

  alignas(4) unsigned char err[NLMSG_LENGTH(sizeof(nlmsgerr))] = {};
  auto* h = reinterpret_cast<nlmsghdr*>(err);
  h->nlmsg_type = NLMSG_ERROR;
  h->nlmsg_len = sizeof(err);
  static_cast<nlmsgerr*>(NLMSG_DATA(h))->error = -ENODEV;
  EXPECT_EQ(parse_link_reply(err, sizeof(err), &out), -ENODEV);
}

// The link attributes a down netdev still answers (doc/hardware.md §9.24): IFLA_CARRIER (u8) and
// IFLA_OPERSTATE (u8, IF_OPER_DOWN = 2 while it is down), absent ones stay -1.
TEST(ParseLinkReply, ReadsCarrierAndOperstate) {
  LinkAnswer a;
  a.add_u32(IFLA_MTU, 1500);
  a.add_u8(IFLA_OPERSTATE, 2);
  a.add_u8(IFLA_CARRIER, 1);
  LinkAttrs out;
  ASSERT_EQ(parse_link_reply(a.buf, a.len, &out), 0);
  EXPECT_EQ(out.carrier, 1);
  EXPECT_EQ(out.operstate, 2);
  EXPECT_EQ(out.mtu, 1500u);
  LinkAnswer none;
  none.add_u32(IFLA_MTU, 1500);
  ASSERT_EQ(parse_link_reply(none.buf, none.len, &out), 0);
  EXPECT_EQ(out.carrier, -1);
  EXPECT_EQ(out.operstate, -1);
}

// ethtool's speed field: SPEED_UNKNOWN (0xffffffff) and 0 say nothing.
TEST(EthtoolSpeed, UnknownIsNone) {
  EXPECT_EQ(ethtool_speed_value(25000), 25000);
  EXPECT_EQ(ethtool_speed_value(0xffffffffu), -1);
  EXPECT_EQ(ethtool_speed_value(0), -1);
}

}  // namespace
