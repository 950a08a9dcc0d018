// SPDX-License-Identifier: BSD-3-Clause
// Probe as DPDK does (doc/hardware.md §2.1, §2.2): device list, sysfs through ibdev_path,
// attributes through the static-inline verbs that need our verbs_context layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <string>

#include "scenario.h"
#include "verbs_driver.h"

namespace mana::emu::test {
namespace {

std::string R() { return scenario().config.root; }

struct DeviceList {
  int n = -1;
  ibv_device** list = ibv_get_device_list(&n);
  ~DeviceList() {
    if (list != nullptr) ibv_free_device_list(list);
  }
  ibv_device* named(const std::string& name) const {
    for (int i = 0; i < n; ++i) {
      if (name == ibv_get_device_name(list[i])) return list[i];
    }
    return nullptr;
  }
};

void check_listing_without_split() {
  DeviceList l;
  ASSERT_NE(l.list, nullptr);
  ASSERT_GE(l.n, 2);
  ibv_device* d0 = l.named("mana_0");
  ibv_device* d1 = l.named("mana_1");
  ASSERT_NE(d0, nullptr);
  ASSERT_NE(d1, nullptr);
  EXPECT_STREQ(d0->dev_name, "uverbs0");
  EXPECT_STREQ(d1->dev_name, "uverbs1");
  EXPECT_EQ(std::string(d0->dev_path), R() + "/sys/class/infiniband_verbs/uverbs0");
  EXPECT_EQ(std::string(d0->ibdev_path), R() + "/sys/class/infiniband/mana_0");
  EXPECT_EQ(d0->node_type, IBV_NODE_CA);
  EXPECT_EQ(d0->transport_type, IBV_TRANSPORT_IB);
  // The PMD's sysfs reads resolve through the generated tree.
  const std::string dev = std::string(d0->ibdev_path) + "/device";
  EXPECT_NE(read_file(dev + "/uevent").find("PCI_SLOT_NAME=7870:00:00.0\n"), std::string::npos);
  EXPECT_EQ(read_file(dev + "/net/eth2/address"), "00:0d:3a:00:00:02\n");
  EXPECT_EQ(read_file(dev + "/net/eth2/dev_port"), "1\n");
  EXPECT_EQ(find_device(l.list, "7870:00:01.0"), d1);
  EXPECT_EQ(find_device(l.list, "7870:00:02.0"), nullptr);
}

void check_attributes() {
  DeviceList l;
  ibv_context* ctx = ibv_open_device(l.named("mana_0"));
  ASSERT_NE(ctx, nullptr);
  // The static inlines find our ops only through an extended verbs_context.
  verbs_context* vctx = verbs_get_ctx(ctx);
  ASSERT_NE(vctx, nullptr);
  EXPECT_EQ(vctx->sz, sizeof(verbs_context));
  ibv_device_attr_ex attr{};
  ASSERT_EQ(ibv_query_device_ex(ctx, nullptr, &attr), 0);
  EXPECT_EQ(attr.orig_attr.vendor_id, 0x1414u);
  EXPECT_EQ(attr.orig_attr.vendor_part_id, 0u);
  EXPECT_EQ(attr.orig_attr.phys_port_cnt, 3);
  EXPECT_EQ(attr.orig_attr.max_qp, 64);
  EXPECT_EQ(attr.orig_attr.max_qp_wr, 256);
  EXPECT_EQ(attr.orig_attr.max_cqe, 256);
  EXPECT_EQ(attr.orig_attr.max_sge, 15);
  EXPECT_EQ(attr.orig_attr.max_mr, INT_MAX);
  EXPECT_EQ(attr.orig_attr.max_mr_size, UINT64_MAX);
  EXPECT_EQ(attr.raw_packet_caps, 0u);
  ibv_query_device_ex_input bad{};
  bad.comp_mask = 1;
  EXPECT_EQ(ibv_query_device_ex(ctx, &bad, &attr), EINVAL);
  ibv_device_attr legacy{};
  ASSERT_EQ(ibv_query_device(ctx, &legacy), 0);
  EXPECT_EQ(legacy.phys_port_cnt, 3);

  ibv_port_attr port{};
  ASSERT_EQ(ibv_query_port(ctx, 1, &port), 0);  // the inline, through verbs_context.query_port
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(ibv_query_port(ctx, 4, &port), EINVAL);
  EXPECT_EQ(ibv_query_port(ctx, 0, &port), EINVAL);
  ibv_port_attr compat{};
  ASSERT_EQ((ibv_query_port)(ctx, 3, reinterpret_cast<_compat_ibv_port_attr*>(&compat)), 0);
  EXPECT_EQ(compat.state, IBV_PORT_ACTIVE);

  // cmd_fd is the context's memfd; async_fd a pollable descriptor.
  char link[64], target[256] = {};
  snprintf(link, sizeof(link), "/proc/self/fd/%d", ctx->cmd_fd);
  ASSERT_GT(readlink(link, target, sizeof(target) - 1), 0);
  EXPECT_EQ(std::string(target).rfind("/memfd:mana-emu-ctx-0-", 0), 0u) << target;
  EXPECT_GE(ctx->async_fd, 0);
  EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST(TrapProbe, DeviceListAndSysfs) { check_listing_without_split(); }
TEST(PollProbe, DeviceListAndSysfs) { check_listing_without_split(); }
TEST(TrapProbe, AttributesThroughInlineVerbs) { check_attributes(); }
TEST(PollProbe, AttributesThroughInlineVerbs) { check_attributes(); }

TEST(SplitProbe, EthernetAndRnicDevicesPerVf) {
  DeviceList l;
  ASSERT_NE(l.list, nullptr);
  const char* names[] = {"manae_0", "mana_0", "manae_1", "mana_1"};
  for (int i = 0; i < 4; ++i) {
    ibv_device* d = l.named(names[i]);
    ASSERT_NE(d, nullptr) << names[i];
    EXPECT_EQ(std::string(d->dev_name), "uverbs" + std::to_string(i));
  }
  struct Expect {
    const char* name;
    uint32_t part;
    int ports;
    uint32_t caps;
  } expected[] = {{"manae_0", 2, 3, IBV_RAW_PACKET_CAP_IP_CSUM}, {"mana_0", 3, 1, 0}};
  for (const Expect& e : expected) {
    ibv_context* ctx = ibv_open_device(l.named(e.name));
    ASSERT_NE(ctx, nullptr);
    ibv_device_attr_ex attr{};
    ASSERT_EQ(ibv_query_device_ex(ctx, nullptr, &attr), 0);
    EXPECT_EQ(attr.orig_attr.vendor_id, 0x1414u);
    EXPECT_EQ(attr.orig_attr.vendor_part_id, e.part) << e.name;
    EXPECT_EQ(attr.orig_attr.phys_port_cnt, e.ports) << e.name;
    EXPECT_EQ(attr.raw_packet_caps, e.caps) << e.name;
    EXPECT_EQ(ibv_close_device(ctx), 0);
  }
  // DPDK's vendor_part_id filter picks the Ethernet device.
  EXPECT_EQ(find_device(l.list, "7870:00:00.0"), l.named("manae_0"));
}

TEST(Limits2025Probe, NewerKernelLimits) {
  DeviceList l;
  ibv_context* ctx = ibv_open_device(l.named("mana_0"));
  ASSERT_NE(ctx, nullptr);
  ibv_device_attr_ex attr{};
  ASSERT_EQ(ibv_query_device_ex(ctx, nullptr, &attr), 0);
  EXPECT_EQ(attr.orig_attr.max_qp_wr, 2048);
  EXPECT_EQ(attr.orig_attr.max_cqe, 2048);
  EXPECT_EQ(attr.orig_attr.max_mr, 0xFFFFFF);
  EXPECT_EQ(ibv_close_device(ctx), 0);
}

}  // namespace
}  // namespace mana::emu::test
