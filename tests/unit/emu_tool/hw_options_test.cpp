// SPDX-License-Identifier: BSD-3-Clause
#include "config/hw_options.h"

#include <gtest/gtest.h>

#include "config/config.h"
#include "tool/run_options.h"

namespace mana::emu {
namespace {

TEST(HwOptions, EveryKeyRoundTripsThroughItsText) {
  const HwBehaviour hw;
  std::string error;
  EmuConfig strict;
  bool coalesce = false;
  ASSERT_TRUE(apply_profile("strict", &strict, &coalesce, &error)) << error;
  HwBehaviour back;
  for (const std::string& word : format_hw_options(strict.hw))
    ASSERT_TRUE(set_hw_option(word, &back, &error)) << error;
  EXPECT_EQ(format_hw_options(back), format_hw_options(strict.hw));
  EXPECT_NE(format_hw_options(back), format_hw_options(hw));  // strict differs from the defaults
}

TEST(HwOptions, BadKeysAndValuesNameWhatIsExpected) {
  HwBehaviour hw;
  std::string error;
  EXPECT_FALSE(set_hw_option("hash-type=both", &hw, &error));
  EXPECT_NE(error.find("hash-type=bit|mask"), std::string::npos) << error;
  EXPECT_FALSE(set_hw_option("no-such=1", &hw, &error));
  EXPECT_NE(error.find("known: raw-qp-first"), std::string::npos) << error;
  EXPECT_FALSE(set_hw_option("cq-eq", &hw, &error));
  EXPECT_NE(error.find("cq-eq=on|off"), std::string::npos) << error;
}

TEST(HwOptions, ProfilesSetLimitsCoalescingAndSplitAndLaterOptionsOverride) {
  RunOptions o;
  std::string error;
  ASSERT_TRUE(parse_run_options({"--profile", "azure-2025", "--hw", "vport-busy=enodev",
                                 "--coalesce", "off", "--", "/bin/true"},
                                &o, &error))
      << error;
  EXPECT_EQ(o.config.limits, EmuConfig::kLimits2025);
  EXPECT_TRUE(o.config.device_split);
  ASSERT_EQ(o.config.vfs.size(), 1u);
  EXPECT_FALSE(o.config.vfs[0].rx_coalescing);
  EXPECT_EQ(o.config.vfs[0].hw.vport_busy_errno, ENODEV);
  EXPECT_TRUE(o.config.vfs[0].hw.raw_qp_first);
  EXPECT_FALSE(parse_run_options({"--profile", "azure-1999", "--", "/bin/true"}, &o, &error));
  EXPECT_NE(error.find("known: default, azure-2023"), std::string::npos) << error;
}

TEST(HwOptions, TheConfigFileCarriesTheBehaviours) {
  RunOptions o;
  std::string error;
  ASSERT_TRUE(parse_run_options({"--profile=strict", "--hw=zero-length-cqe=3", "--", "/bin/true"},
                                &o, &error))
      << error;
  o.config.root = "/tmp/r";
  o.config.control = "/tmp/r/control.sock";
  EmuConfig back;
  ASSERT_TRUE(parse_config(format_config(o.config), "cfg", &back, &error)) << error;
  ASSERT_EQ(back.vfs.size(), 1u);
  EXPECT_EQ(back.vfs[0].hw.zero_length_cqe_every, 3u);
  EXPECT_EQ(back.vfs[0].hw.hash_type, HwBehaviour::HashType::kMask);
  EXPECT_EQ(format_hw_options(back.vfs[0].hw), format_hw_options(o.config.hw));
  EXPECT_FALSE(parse_config("root=/r\nhw cq-doorbell=sometimes\nvf pci=7870:00:00.0\n", "cfg",
                            &back, &error));
  EXPECT_NE(error.find("cfg:2: hw 'cq-doorbell=sometimes'"), std::string::npos) << error;
}

// ---- libmana CQ rules and RX steering teardown (doc/hardware.md §9.21, §9.22)
TEST(HwOptions, LibmanaCqRuleAndSteeringTeardownByNameAndInAzure2026) {
  HwBehaviour hw;
  std::string error;
  EXPECT_EQ(hw.libmana_cq_rule, HwBehaviour::LibmanaCqRule::kV44);  // rdma-core 44 by default
  EXPECT_FALSE(hw.rx_steering_keep);
  ASSERT_TRUE(set_hw_option("libmana-cq-rule=v53", &hw, &error)) << error;
  EXPECT_EQ(hw.libmana_cq_rule, HwBehaviour::LibmanaCqRule::kV53);
  ASSERT_TRUE(set_hw_option("rx-steering-on-destroy=keep", &hw, &error)) << error;
  EXPECT_TRUE(hw.rx_steering_keep);
  EXPECT_FALSE(set_hw_option("libmana-cq-rule=v50", &hw, &error));
  EXPECT_NE(error.find("libmana-cq-rule=v44|v53|v62"), std::string::npos) << error;
  EmuConfig c;
  bool coalesce = false;
  ASSERT_TRUE(apply_profile("azure-2026", &c, &coalesce, &error)) << error;
  EXPECT_EQ(c.hw.libmana_cq_rule, HwBehaviour::LibmanaCqRule::kV62);
  EXPECT_FALSE(c.hw.rx_steering_keep);
  EXPECT_EQ(c.hw.libmana_max_wr, 0u);
  EXPECT_TRUE(c.device_split);
  EXPECT_TRUE(coalesce);
  HwBehaviour back;
  for (const std::string& word : format_hw_options(c.hw))
    ASSERT_TRUE(set_hw_option(word, &back, &error)) << error;
  EXPECT_EQ(format_hw_options(back), format_hw_options(c.hw));
}

TEST(HwOptions, LinkSpeedAndTheAzure2026Profile) {
  HwBehaviour hw;
  std::string error;
  ASSERT_TRUE(set_hw_option("link-speed-mbps=12500", &hw, &error)) << error;
  EXPECT_EQ(hw.link_speed_mbps, 12500);
  ASSERT_TRUE(set_hw_option("link-speed-mbps=-1", &hw, &error)) << error;
  EXPECT_EQ(hw.link_speed_mbps, -1);
  EXPECT_FALSE(set_hw_option("link-speed-mbps=0", &hw, &error));
  EXPECT_NE(error.find("link-speed-mbps=N"), std::string::npos) << error;
  EXPECT_FALSE(set_hw_option("link-speed-mbps=900000", &hw, &error));
  EmuConfig c;
  bool coalesce = false;
  ASSERT_TRUE(apply_profile("azure-2026", &c, &coalesce, &error)) << error;
  EXPECT_EQ(c.hw.link_speed_mbps, HwBehaviour{}.link_speed_mbps);
  EXPECT_TRUE(c.device_split);
  ASSERT_TRUE(apply_profile("azure-2025", &c, &coalesce, &error)) << error;
  EXPECT_EQ(c.hw.link_speed_mbps, -1);  // no speed before Linux 6.17
}

}  // namespace
}  // namespace mana::emu
