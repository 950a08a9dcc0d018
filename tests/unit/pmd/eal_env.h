// SPDX-License-Identifier: BSD-3-Clause
// A minimal in-memory EAL for tests that need DPDK memory or mempools (no hugepages, no devices).
#pragma once

#include <gtest/gtest.h>
#include <rte_eal.h>

namespace mana_test {

class EalEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* argv[] = {"unit-pmd",    "--no-huge", "-m", "256",         "--no-pci",
                          "--no-shconf", "-l",        "0",  "--log-level", "*:warning"};
    ASSERT_GE(
        rte_eal_init(static_cast<int>(sizeof(argv) / sizeof(argv[0])), const_cast<char**>(argv)),
        0);
  }
  void TearDown() override { rte_eal_cleanup(); }
};

}  // namespace mana_test
