// SPDX-License-Identifier: BSD-3-Clause
// A port without a device for data-path tests (see fake_nic.h): the tests play the NIC, reading the
// WQEs the burst functions write and writing CQEs.
#pragma once

#include <cstdio>

#include <gtest/gtest.h>

#include "fake_nic.h"

namespace mana_test {

class FakePort : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[32];
    snprintf(name, sizeof(name), "fake_pool_%u", pool_serial_++);
    ASSERT_TRUE(state_.init(name, kPoolSize));
    pool_ = state_.pool;
  }
  void TearDown() override { state_.release(); }
  uint64_t doorbell(uint32_t offset) const {
    uint64_t v;
    std::memcpy(&v, state_.db_page.p + offset, sizeof(v));
    return v;
  }
  unsigned in_use() const { return rte_mempool_in_use_count(pool_); }

  static constexpr unsigned kPoolSize = 1023;
  static inline unsigned pool_serial_ = 0;
  FakePortState state_;
  mana::PortPriv& priv_ = state_.priv;
  mana::ProcessPrivate& pp_ = state_.pp;
  rte_mempool* pool_ = nullptr;
};

}  // namespace mana_test
