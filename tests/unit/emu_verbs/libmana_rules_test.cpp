// SPDX-License-Identifier: BSD-3-Clause
// rdma-core's libmana CQ rules by version (hw libmana-cq-rule, doc/hardware.md §9.21), through the
// rdma-core API: a CQ created before the buffer allocators are set, and the cq_id manadv_init_obj
// reports before and after a QP uses a CQ. Suites: Trap (v44), Libmana53, Libmana62.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "scenario.h"
#include "verbs/libmana_rules.h"
#include "verbs_driver.h"

namespace mana::emu::test {
namespace {

using verbs::CqKind;
using verbs::LibmanaCqRule;

// A port opened without the buffer allocators (set_allocators() sets them later).
struct BarePort {
  ibv_device** list = ibv_get_device_list(nullptr);
  PortObjects port;
  BarePort() { EXPECT_TRUE(port.open(find_device(list, "7870:00:00.0"), 1)) << strerror(errno); }
  ~BarePort() {
    port.close();
    ibv_free_device_list(list);
  }
};

manadv_cq cq_view(ibv_cq* cq) {
  manadv_cq out{};
  manadv_obj obj{};
  obj.cq.in = cq;
  obj.cq.out = &out;
  EXPECT_EQ(manadv_init_obj(&obj, MANADV_OBJ_CQ), 0);
  return out;
}

// A raw QP over `cq`: nullptr with errno when refused.
ibv_qp* raw_qp(PortObjects& port, ibv_cq* cq) {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.cap.max_send_wr = 64;
  attr.cap.max_send_sge = 15;
  attr.qp_type = IBV_QPT_RAW_PACKET;
  return ibv_create_qp(port.ppd, &attr);
}

// The pure rules (no emulated device needed).
TEST(TrapLibmanaRules, WhatEachVersionMakesOfACqAndItsUnboundId) {
  EXPECT_EQ(verbs::cq_kind(LibmanaCqRule::kV44, false), CqKind::kRefused);
  EXPECT_EQ(verbs::cq_kind(LibmanaCqRule::kV53, false), CqKind::kRnic);
  EXPECT_EQ(verbs::cq_kind(LibmanaCqRule::kV62, false), CqKind::kRnic);
  for (auto r : {LibmanaCqRule::kV44, LibmanaCqRule::kV53, LibmanaCqRule::kV62})
    EXPECT_EQ(verbs::cq_kind(r, true), CqKind::kEthernet);
  EXPECT_EQ(verbs::unbound_cq_id(LibmanaCqRule::kV44), 0u);
  EXPECT_EQ(verbs::unbound_cq_id(LibmanaCqRule::kV53), 0u);
  EXPECT_EQ(verbs::unbound_cq_id(LibmanaCqRule::kV62), UINT32_MAX);
  EXPECT_EQ(verbs::rnic_cq_count(100), 128u);  // the whole 8 KiB buffer
  EXPECT_EQ(verbs::rnic_cq_count(256), 256u);
}

TEST(TrapLibmanaRules, V44RefusesACqBeforeTheAllocators) {
  BarePort p;
  EXPECT_FAILS_WITH(ibv_create_cq(p.port.ctx, 64, nullptr, nullptr, 0), EINVAL);
  ASSERT_EQ(p.port.set_allocators(), 0);
  ibv_cq* cq = ibv_create_cq(p.port.ctx, 64, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq_view(cq).cq_id, 0u);  // rdma-core 44: zero until a QP binds it
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

// rdma-core >= 53: the early CQ is created, as an RDMA CQ in libmana's memory with its whole
// buffer as count and an id of its own; the Ethernet QPs that would use it are refused.
void early_cq_is_an_rdma_cq_that_raw_and_rss_qps_refuse() {
  BarePort p;
  ibv_cq* early = ibv_create_cq(p.port.ctx, 100, nullptr, nullptr, 0);
  ASSERT_NE(early, nullptr) << strerror(errno);
  const manadv_cq v = cq_view(early);
  EXPECT_EQ(v.count, 128u);
  EXPECT_NE(v.cq_id, 0u);
  EXPECT_NE(v.cq_id, UINT32_MAX);
  ASSERT_EQ(p.port.set_allocators(), 0);
  EXPECT_FAILS_WITH(raw_qp(p.port, early), EPROTO);
  // The driver's right order still works next to it.
  TxQueue txq;
  ASSERT_EQ(txq.create(p.port, 64), 0);
  ibv_wq_init_attr wattr{};
  wattr.wq_type = IBV_WQT_RQ;
  wattr.max_wr = 64;
  wattr.max_sge = 1;
  wattr.pd = p.port.ppd;
  wattr.cq = early;
  ibv_wq* wq = ibv_create_wq(p.port.ctx, &wattr);
  ASSERT_NE(wq, nullptr);  // the kernel's create_wq does not look at the CQ
  ibv_wq* wqs[1] = {wq};
  ibv_rwq_ind_table_init_attr tattr{};
  tattr.log_ind_tbl_size = 0;
  tattr.ind_tbl = wqs;
  ibv_rwq_ind_table* ind = ibv_create_rwq_ind_table(p.port.ctx, &tattr);
  ASSERT_NE(ind, nullptr);
  uint8_t key[40] = {1};
  ibv_qp_init_attr_ex qattr{};
  qattr.qp_type = IBV_QPT_RAW_PACKET;
  qattr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE;
  qattr.pd = p.port.ppd;
  qattr.rwq_ind_tbl = ind;
  qattr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
  qattr.rx_hash_conf.rx_hash_key_len = sizeof(key);
  qattr.rx_hash_conf.rx_hash_key = key;
  qattr.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
  EXPECT_FAILS_WITH(ibv_create_qp_ex(p.port.ctx, &qattr), EPROTO);
  EXPECT_EQ(ibv_destroy_rwq_ind_table(ind), 0);
  EXPECT_EQ(ibv_destroy_wq(wq), 0);
  EXPECT_EQ(ibv_destroy_cq(early), 0);
  txq.destroy();
}

// The id manadv_init_obj reports for an Ethernet CQ before and after its QP.
void cq_id_before_and_after_the_qp(uint32_t unbound) {
  BarePort p;
  ASSERT_EQ(p.port.set_allocators(), 0);
  ibv_cq* cq = ibv_create_cq(p.port.ctx, 64, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq_view(cq).cq_id, unbound);
  EXPECT_EQ(cq_view(cq).count, 64u);
  ibv_qp* qp = raw_qp(p.port, cq);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  const uint32_t bound = cq_view(cq).cq_id;
  EXPECT_NE(bound, 0u);
  EXPECT_NE(bound, UINT32_MAX);
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST(Libmana53LibmanaRules, AnEarlyCqIsAnRdmaCqThatRawAndRssQpsRefuse) {
  early_cq_is_an_rdma_cq_that_raw_and_rss_qps_refuse();
}
TEST(Libmana53LibmanaRules, AnEthernetCqIdIsZeroUntilItsQp) { cq_id_before_and_after_the_qp(0); }
TEST(Libmana62LibmanaRules, AnEarlyCqIsAnRdmaCqThatRawAndRssQpsRefuse) {
  early_cq_is_an_rdma_cq_that_raw_and_rss_qps_refuse();
}
TEST(Libmana62LibmanaRules, AnEthernetCqIdIsInvalidUntilItsQp) {
  cq_id_before_and_after_the_qp(UINT32_MAX);
}

}  // namespace
}  // namespace mana::emu::test
