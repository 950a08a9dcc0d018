// SPDX-License-Identifier: BSD-3-Clause
// Control-path rules on a fake ethdev (doc/hardware.md §2.3, §2.5, §5.3): device limits reported,
// queue-count refusals, ring sizes, RSS configuration and the indirection table.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ethdev_driver.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "ethdev_ops.h"
#include "priv.h"
#include "queue_create.h"
#include "rss.h"
#include "rx_queue.h"

namespace {

using namespace mana;

// (DPDK 24.03 added rte_eth_rss_conf::algorithm: the fields by name, the rest zero)
rte_eth_rss_conf rss_conf(uint8_t* key, uint8_t key_len, uint64_t hf) {
  rte_eth_rss_conf c{};
  c.rss_key = key;
  c.rss_key_len = key_len;
  c.rss_hf = hf;
  return c;
}

class ControlRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    priv_.caps = DeviceCaps{64, 256, 256, 15, 0x7FFFFFFF, UINT64_MAX};
    data_.dev_private = &priv_;
    dev_.data = &data_;
    ops_ = primary_dev_ops();
  }
  int configure(uint16_t rxq, uint16_t txq) {
    data_.nb_rx_queues = rxq;
    data_.nb_tx_queues = txq;
    return ops_->dev_configure(&dev_);
  }

  // Runs `call` with the driver's log going to a string; returns what it logged.
  template <class Call>
  std::string logged(Call call) {
    char* text = nullptr;
    size_t size = 0;
    FILE* log = open_memstream(&text, &size);
    EXPECT_NE(log, nullptr);
    rte_openlog_stream(log);
    call();
    rte_openlog_stream(nullptr);
    fclose(log);
    std::string out(text);
    free(text);
    return out;
  }

  PortPriv priv_{};
  rte_eth_dev_data data_{};
  rte_eth_dev dev_{};
  const eth_dev_ops* ops_ = nullptr;
};

TEST_F(ControlRulesTest, InfoReportsDeviceLimits) {
  rte_eth_dev_info info{};
  ASSERT_EQ(ops_->dev_infos_get(&dev_, &info), 0);
  EXPECT_EQ(info.max_rx_queues, 64);
  EXPECT_EQ(info.max_tx_queues, 64);
  EXPECT_EQ(info.rx_desc_lim.nb_min, 64);
  EXPECT_EQ(info.rx_desc_lim.nb_max, 256);
  EXPECT_EQ(info.rx_desc_lim.nb_align, 64);
  // A TSO packet's headers may take an SGE of their own (doc/hardware.md §4.11).
  EXPECT_EQ(info.tx_desc_lim.nb_seg_max, 14);
  EXPECT_EQ(info.tx_desc_lim.nb_mtu_seg_max, 15);
  EXPECT_TRUE(info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_TSO);
  EXPECT_EQ(info.reta_size, 64);
  EXPECT_EQ(info.hash_key_size, 40);
  EXPECT_EQ(info.flow_type_rss_offloads, kSupportedRssHf);
  EXPECT_EQ(info.default_rxportconf.ring_size, 256);
  EXPECT_EQ(info.default_txportconf.nb_queues, 1);
  EXPECT_TRUE(info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
  EXPECT_TRUE(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH);

  // A 2025 device: more queues than the RSS table, 2048 descriptors.
  priv_.caps = DeviceCaps{256, 2048, 2048, 15, 0xFFFFFF, UINT64_MAX};
  ASSERT_EQ(ops_->dev_infos_get(&dev_, &info), 0);
  EXPECT_EQ(info.max_rx_queues, 64);
  EXPECT_EQ(info.max_tx_queues, 256);
  EXPECT_EQ(info.tx_desc_lim.nb_max, 2048);
}

TEST_F(ControlRulesTest, QueueCountRules) {
  EXPECT_EQ(configure(1, 1), 0);
  EXPECT_EQ(configure(4, 3), 0);  // RX and TX counts need not match; TX any count
  EXPECT_EQ(configure(64, 64), 0);
  EXPECT_EQ(configure(3, 3), -EINVAL);    // not a power of two
  EXPECT_EQ(configure(128, 1), -EINVAL);  // beyond the RSS table (and max_qp)
  EXPECT_EQ(configure(1, 65), -EINVAL);   // beyond max_qp
  // RX-only: the RSS QP needs a raw QP (TX queue) to configure the vPort (doc/hardware.md §2.4).
  EXPECT_EQ(configure(1, 0), -EINVAL);
}

TEST_F(ControlRulesTest, RssModeTurnsOnTheHashOffloadAndKeyIsChecked) {
  data_.dev_conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
  uint8_t key[40];
  for (int i = 0; i < 40; i++) key[i] = static_cast<uint8_t>(i);
  data_.dev_conf.rx_adv_conf.rss_conf = rss_conf(key, 40, RTE_ETH_RSS_NONFRAG_IPV4_TCP);
  ASSERT_EQ(configure(2, 2), 0);
  EXPECT_TRUE(data_.dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_RSS_HASH);
  EXPECT_EQ(std::memcmp(priv_.rss_key, key, 40), 0);
  EXPECT_EQ(priv_.rss_hf, RTE_ETH_RSS_NONFRAG_IPV4_TCP);
  data_.dev_conf.rx_adv_conf.rss_conf.rss_key_len = 39;
  EXPECT_EQ(configure(2, 2), -EINVAL);
}

// While started the RX side is re-created (queue_control.h); with RX interrupts it cannot be, and
// the update leaves the configuration as it was.
TEST_F(ControlRulesTest, RssHashUpdateWhileStartedNeedsNoRxInterrupts) {
  uint8_t key[40] = {1};
  rte_eth_rss_conf conf = rss_conf(key, 40, RTE_ETH_RSS_IPV6);
  data_.nb_rx_queues = 2;
  data_.dev_started = 1;
  data_.dev_conf.intr_conf.rxq = 1;
  std::memset(priv_.rss_key, 7, sizeof(priv_.rss_key));
  EXPECT_EQ(ops_->rss_hash_update(&dev_, &conf), -ENOTSUP);
  EXPECT_EQ(priv_.rss_key[0], 7);
  EXPECT_EQ(priv_.rss_hf, 0u);
  data_.dev_started = 0;
  EXPECT_EQ(ops_->rss_hash_update(&dev_, &conf), 0);
  conf.rss_key_len = 16;
  EXPECT_EQ(ops_->rss_hash_update(&dev_, &conf), -EINVAL);
  conf.rss_key_len = 40;
  conf.rss_hf = RTE_ETH_RSS_L2_PAYLOAD;
  EXPECT_EQ(ops_->rss_hash_update(&dev_, &conf), -EINVAL);

  uint8_t out[40] = {};
  rte_eth_rss_conf got = rss_conf(out, 40, 0);
  ASSERT_EQ(ops_->rss_hash_conf_get(&dev_, &got), 0);
  EXPECT_EQ(got.rss_hf, RTE_ETH_RSS_IPV6);
  EXPECT_EQ(std::memcmp(out, key, 40), 0);
}

TEST_F(ControlRulesTest, FieldsMaskCoversBothDirections) {
  EXPECT_EQ(rss_fields_mask(0), uint64_t{IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4});
  EXPECT_EQ(rss_fields_mask(RTE_ETH_RSS_NONFRAG_IPV6_UDP),
            uint64_t{IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | IBV_RX_HASH_SRC_PORT_UDP |
                     IBV_RX_HASH_DST_PORT_UDP});
}

TEST_F(ControlRulesTest, RetaIsQueueIndexModuloRxQueues) {
  data_.nb_rx_queues = 4;
  rte_eth_rss_reta_entry64 reta[1]{};
  reta[0].mask = ~0ull;
  ASSERT_EQ(ops_->reta_query(&dev_, reta, 64), 0);
  for (unsigned i = 0; i < 64; i++) EXPECT_EQ(reta[0].reta[i], i % 4) << i;
  // Any of DPDK's table sizes shows the same periodic table (net_netvsc's VF sees 128).
  rte_eth_rss_reta_entry64 big[8]{};
  for (auto& g : big) g.mask = ~0ull;
  ASSERT_EQ(ops_->reta_query(&dev_, big, 512), 0);
  for (unsigned i = 0; i < 512; i++) EXPECT_EQ(big[i / 64].reta[i % 64], i % 4) << i;
  for (uint16_t bad : {0, 32, 96, 100, 1024})
    EXPECT_EQ(ops_->reta_query(&dev_, big, bad), -EINVAL) << bad;
}

// rdma-core 44..48's libmana refuses more than 256 WRs/CQEs whatever the kernel reports: the
// descriptor limit is the smaller of the two, and messages say where it comes from.
TEST_F(ControlRulesTest, ProviderLimitCapsTheDescriptorLimit) {
  priv_.caps = DeviceCaps{256, 2048, 2048, 15, 0xFFFFFF, UINT64_MAX, 256};
  rte_eth_dev_info info{};
  ASSERT_EQ(ops_->dev_infos_get(&dev_, &info), 0);
  EXPECT_EQ(info.rx_desc_lim.nb_max, 256);
  EXPECT_EQ(info.tx_desc_lim.nb_max, 256);
  EXPECT_STREQ(desc_limit_source(priv_.caps), "rdma-core's libmana (< v49) limit");
  EXPECT_EQ(ring_size_for(2048, max_desc_of(priv_.caps)), 256u);
  priv_.caps.provider_max_wr = 0;  // rdma-core >= 49: the kernel's limit
  ASSERT_EQ(ops_->dev_infos_get(&dev_, &info), 0);
  EXPECT_EQ(info.rx_desc_lim.nb_max, 2048);
  EXPECT_STREQ(desc_limit_source(priv_.caps), "the kernel's max_qp_wr/max_cqe");
}

namespace {
// The 64-entry RETA as reta_query gives it.
std::vector<uint16_t> reta_of(const eth_dev_ops* ops, rte_eth_dev* dev) {
  rte_eth_rss_reta_entry64 conf[1] = {};
  conf[0].mask = ~0ULL;
  EXPECT_EQ(ops->reta_query(dev, conf, 64), 0);
  return std::vector<uint16_t>(conf[0].reta, conf[0].reta + 64);
}
}  // namespace

// The NIC's table repeats its WQs with the number of RX queues as period, each WQ once
// (doc/hardware.md §2.5): entry i stands for every entry congruent to it.
TEST_F(ControlRulesTest, RetaUpdateIsAPermutationOfThePeriod) {
  ASSERT_EQ(configure(4, 4), 0);
  std::vector<uint16_t> t = reta_of(ops_, &dev_);
  for (unsigned i = 0; i < 64; i++) EXPECT_EQ(t[i], i % 4);

  rte_eth_rss_reta_entry64 conf[1] = {};
  conf[0].mask = 0b11;  // entries 0 and 1 swapped: entries 4k and 4k+1 follow
  conf[0].reta[0] = 1;
  conf[0].reta[1] = 0;
  ASSERT_EQ(ops_->reta_update(&dev_, conf, 64), 0);
  t = reta_of(ops_, &dev_);
  constexpr uint16_t kSwapped[4] = {1, 0, 2, 3};
  for (unsigned i = 0; i < 64; i++) EXPECT_EQ(t[i], kSwapped[i % 4]) << i;

  conf[0].mask = 1;  // queue 1 twice
  conf[0].reta[0] = 0;
  EXPECT_EQ(ops_->reta_update(&dev_, conf, 64), -ENOTSUP);
  conf[0].mask = 1ULL | 1ULL << 4;  // congruent entries, different queues
  conf[0].reta[0] = 2;
  conf[0].reta[4] = 3;
  EXPECT_EQ(ops_->reta_update(&dev_, conf, 64), -ENOTSUP);
  conf[0].mask = 1;
  conf[0].reta[0] = 4;  // no such queue
  EXPECT_EQ(ops_->reta_update(&dev_, conf, 64), -ENOTSUP);
  EXPECT_EQ(ops_->reta_update(&dev_, conf, 96), -EINVAL);
  // 128 entries whose halves disagree: entry 64 names queue 3 where entry 0 names queue 1.
  rte_eth_rss_reta_entry64 split[2] = {};
  split[0].mask = split[1].mask = 1;
  split[0].reta[0] = 1;
  split[1].reta[0] = 3;
  EXPECT_EQ(ops_->reta_update(&dev_, split, 128), -ENOTSUP);
  EXPECT_EQ(reta_of(ops_, &dev_), t);  // refused updates changed nothing

  // net_netvsc's form: 128 entries, i -> (3 - i % 4), as DPDK's netvsc hands its table to the VF.
  rte_eth_rss_reta_entry64 netvsc[2] = {};
  for (unsigned i = 0; i < 128; i++) {
    netvsc[i / 64].mask |= 1ULL << (i % 64);
    netvsc[i / 64].reta[i % 64] = static_cast<uint16_t>(3 - i % 4);
  }
  ASSERT_EQ(ops_->reta_update(&dev_, netvsc, 128), 0);
  t = reta_of(ops_, &dev_);
  for (unsigned i = 0; i < 64; i++) EXPECT_EQ(t[i], 3 - i % 4) << i;
  ASSERT_EQ(configure(4, 4), 0);
  t = reta_of(ops_, &dev_);

  // A full table in the NIC's form is taken as is.
  rte_eth_rss_reta_entry64 full[1] = {};
  full[0].mask = ~0ULL;
  for (unsigned i = 0; i < 64; i++) full[0].reta[i] = static_cast<uint16_t>(3 - i % 4);
  ASSERT_EQ(ops_->reta_update(&dev_, full, 64), 0);
  EXPECT_EQ(reta_of(ops_, &dev_), std::vector<uint16_t>(full[0].reta, full[0].reta + 64));

  // configure starts again from the default table.
  ASSERT_EQ(configure(4, 4), 0);
  t = reta_of(ops_, &dev_);
  for (unsigned i = 0; i < 64; i++) EXPECT_EQ(t[i], i % 4);
}

// The vPort-busy hint fires for ENODEV (6.x kernels) and EBUSY (newer kernels) alike.
TEST_F(ControlRulesTest, VportBusyHintForEnodevAndEbusy) {
  snprintf(priv_.ifname, sizeof(priv_.ifname), "eth7");
  for (int err : {ENODEV, EBUSY, EINVAL}) {
    const std::string text =
        logged([&] { EXPECT_EQ(log_queue_create_error(priv_, "TX queue 0 QP", err), -err); });
    const bool hint = text.find("ip link set eth7 down") != std::string::npos;
    EXPECT_EQ(hint, err != EINVAL) << err << ": " << text;
  }
}

// A mempool header with its pktmbuf private data, enough for rte_pktmbuf_data_room_size.
struct FakePktmbufPool {
  explicit FakePktmbufPool(uint16_t data_room) {
    mp->cache_size = 0;
    mp->private_data_size = sizeof(rte_pktmbuf_pool_private);
    snprintf(mp->name, sizeof(mp->name), "small_pool");
    auto* priv = static_cast<rte_pktmbuf_pool_private*>(rte_mempool_get_priv(mp));
    priv->mbuf_data_room_size = data_room;
  }
  alignas(RTE_CACHE_LINE_SIZE) uint8_t mem[sizeof(rte_mempool) + 256] = {};
  rte_mempool* mp = reinterpret_cast<rte_mempool*>(mem);
};

// No scattered RX: a buffer smaller than the largest frame of the MTU (MTU + 14 + headroom) is
// refused at setup, with the size it needs, instead of every larger frame being dropped later.
TEST_F(ControlRulesTest, RxBufferSmallerThanTheLargestFrameIsRefused) {
  for (uint16_t mtu : {uint16_t{1500}, uint16_t{9000}}) {
    data_.mtu = mtu;
    const uint32_t needed = RTE_PKTMBUF_HEADROOM + mtu + 14u;
    rte_eth_rxconf conf{};
    for (uint16_t room : {uint16_t{1200}, static_cast<uint16_t>(needed - 1)}) {
      FakePktmbufPool pool(room);
      int rc = 0;
      const std::string log =
          logged([&] { rc = ops_->rx_queue_setup(&dev_, 0, 256, 0, &conf, pool.mp); });
      EXPECT_EQ(rc, -EINVAL) << room;
      EXPECT_NE(log.find("--mbuf-size=" + std::to_string(needed)), std::string::npos) << log;
      EXPECT_NE(log.find("max_rx_pktlen " + std::to_string(mtu + 14)), std::string::npos) << log;
      EXPECT_EQ(data_.rx_queues, nullptr);
    }
  }
}

// mtu_set states the same measure as queue setup: the data room with the headroom (9142 for
// MTU 9000, not the 9014 of the frame alone), and the same testpmd option.
TEST_F(ControlRulesTest, MtuSetStatesTheDataRoomAsQueueSetupDoes) {
  priv_.max_mtu = 9000;
  RxQueue q{};
  q.buf_len = 2176 - RTE_PKTMBUF_HEADROOM;  // a queue set up from testpmd's default pool
  void* queues[1] = {&q};
  data_.rx_queues = queues;
  data_.nb_rx_queues = 1;
  int rc = 0;
  const std::string log = logged([&] { rc = ops_->mtu_set(&dev_, 9000); });
  EXPECT_EQ(rc, -EINVAL);
  EXPECT_NE(log.find("data room of 9142 bytes"), std::string::npos) << log;
  EXPECT_NE(log.find("max_rx_pktlen 9014, + headroom 128"), std::string::npos) << log;
  EXPECT_NE(log.find("RX queue 0's has 2176"), std::string::npos) << log;
  EXPECT_NE(log.find("--mbuf-size=9142"), std::string::npos) << log;
  data_.rx_queues = nullptr;
  data_.nb_rx_queues = 0;
}

TEST(RingSize, PowerOfTwoWithinTheDeviceLimit) {
  EXPECT_EQ(ring_size_for(64, 256), 64u);
  EXPECT_EQ(ring_size_for(192, 256), 256u);
  EXPECT_EQ(ring_size_for(256, 256), 256u);
  EXPECT_EQ(ring_size_for(1984, 1984), 1024u);  // 2048 would exceed a 2000-WR device
  EXPECT_EQ(max_desc_of(DeviceCaps{64, 2000, 4096, 15, 0, 0}), 1984u);
  EXPECT_EQ(max_desc_of(DeviceCaps{64, 1 << 20, 1 << 20, 15, 0, 0}), 65472u);
}

}  // namespace
