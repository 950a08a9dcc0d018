// SPDX-License-Identifier: BSD-3-Clause
// Control-path behaviours through the rdma-core API (doc/emulator.md, "Open behaviours: control
// path"): the uverbs core's teardown order, and the azure-2025 profile's libmana-max-wr (256 in
// user space under a 2048 kernel), raw-qp-first and vport-busy=ebusy.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "scenario.h"
#include "verbs_driver.h"

namespace mana::emu::test {
namespace {

void expect_all_freed(unsigned vf) {
  std::string reply;
  EXPECT_TRUE(vf_has_no_live_objects(vf, &reply)) << reply;
  EXPECT_EQ(Allocator::live(), 0);
}

struct OpenPort {
  ibv_device** list = ibv_get_device_list(nullptr);
  PortObjects port;
  explicit OpenPort(uint32_t ib_port = 1) {
    EXPECT_TRUE(port.open(find_device(list, "7870:00:00.0"), ib_port)) << strerror(errno);
    EXPECT_EQ(port.set_allocators(), 0);
  }
  ~OpenPort() {
    port.close();
    ibv_free_device_list(list);
  }
};

// ib_destroy_wq_user and uverbs_free_rwq_ind_tbl refuse while a user holds the object: the table
// while an RSS QP uses it, a WQ while a table names it.
TEST(TrapControlHw, TeardownGoesQpThenTableThenWq) {
  {
    OpenPort p;
    TxQueue txq;
    ASSERT_EQ(txq.create(p.port, 64), 0);
    RxQueue rxq;
    ASSERT_EQ(rxq.create(p.port, 64), 0);
    EXPECT_EQ(ibv_destroy_wq(rxq.wq), EBUSY);
    EXPECT_EQ(ibv_destroy_rwq_ind_table(rxq.ind), EBUSY);
    ASSERT_EQ(ibv_destroy_qp(rxq.rss), 0);
    rxq.rss = nullptr;
    EXPECT_EQ(ibv_destroy_wq(rxq.wq), EBUSY);  // the table still names it
    ASSERT_EQ(ibv_destroy_rwq_ind_table(rxq.ind), 0);
    rxq.ind = nullptr;
    rxq.destroy();
    EXPECT_EQ(rxq.wq, nullptr);
    txq.destroy();
  }
  expect_all_freed(0);
}

TEST(Azure2025ControlHw, Rdmacore44RefusesMoreThan256EntriesThoughTheKernelAllows2048) {
  {
    OpenPort p;
    ibv_device_attr attr{};
    ASSERT_EQ(ibv_query_device(p.port.ctx, &attr), 0);
    EXPECT_EQ(attr.max_qp_wr, 2048);
    EXPECT_EQ(attr.max_cqe, 2048);
    EXPECT_FAILS_WITH(ibv_create_cq(p.port.ctx, 257, nullptr, nullptr, 0), EINVAL);
    EXPECT_FAILS_WITH(ibv_create_cq(p.port.ctx, 2048, nullptr, nullptr, 0), EINVAL);
    TxQueue big;
    EXPECT_EQ(big.create(p.port, 1024), EINVAL);
    big.destroy();
    TxQueue txq;
    ASSERT_EQ(txq.create(p.port, 256), 0);
    RxQueue rx_big;
    EXPECT_EQ(rx_big.create(p.port, 512), EINVAL);
    rx_big.destroy();
    txq.destroy();
  }
  expect_all_freed(0);
}

TEST(Azure2025ControlHw, RssQpBeforeARawQpIsEinvalAndABusyVportEbusy) {
  {
    OpenPort p;
    RxQueue alone;
    EXPECT_EQ(alone.create(p.port, 64), EINVAL);
    alone.destroy();
    TxQueue txq;
    ASSERT_EQ(txq.create(p.port, 64), 0);
    RxQueue rxq;
    ASSERT_EQ(rxq.create(p.port, 64), 0);
    // A second context (another process's PD) on the same port.
    OpenPort other;
    TxQueue foreign;
    EXPECT_EQ(foreign.create(other.port, 64), EBUSY);
    foreign.destroy();
    rxq.destroy();
    txq.destroy();
  }
  expect_all_freed(0);
}

}  // namespace
}  // namespace mana::emu::test
