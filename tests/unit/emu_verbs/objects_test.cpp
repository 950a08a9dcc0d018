// SPDX-License-Identifier: BSD-3-Clause
// Object creation as DPDK's net_mana does it (doc/hardware.md §2.3, §2.4), manadv_init_obj's view
// (§3.3), and the error paths of libmana v44 and the kernel (§3.1, §3.2, §6.2, §6.4), ending with
// every object freed (the device's live-object counts back to zero, every queue buffer back to the
// allocator).
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "scenario.h"
#include "verbs_driver.h"

namespace mana::emu::test {
namespace {

// The device of VF `vf` a DPDK probe would pick, with the list kept for the test's duration.
struct Probe {
  ibv_device** list = ibv_get_device_list(nullptr);
  ibv_device* dev(unsigned vf = 0) const {
    return find_device(list, vf == 0 ? "7870:00:00.0" : "7870:00:01.0");
  }
  ~Probe() { ibv_free_device_list(list); }
};

void expect_all_freed(unsigned vf) {
  std::string reply;
  EXPECT_TRUE(vf_has_no_live_objects(vf, &reply)) << reply;
  EXPECT_EQ(Allocator::live(), 0);
}

void check_dpdk_sequence() {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1)) << strerror(errno);
  TxQueue txq;
  ASSERT_EQ(txq.create(port, 256), 0);
  RxQueue rxq;
  ASSERT_EQ(rxq.create(port, 256), 0);
  // manadv_init_obj: the geometry libmana caches (doc/hardware.md §3.2/§3.3).
  EXPECT_NE(txq.mqp.sq_buf, nullptr);
  EXPECT_EQ(txq.mqp.sq_count, 256u);
  EXPECT_EQ(txq.mqp.sq_size, 65536u);
  EXPECT_NE(txq.mqp.sq_id, 0u);
  EXPECT_NE(txq.mqp.db_page, nullptr);
  EXPECT_EQ(txq.mcq.count, 256u);
  EXPECT_NE(txq.mcq.cq_id, 0u);  // set by the raw QP
  EXPECT_NE(rxq.mrwq.buf, nullptr);
  EXPECT_EQ(rxq.mrwq.count, 256u);
  EXPECT_EQ(rxq.mrwq.size, 8192u);
  EXPECT_NE(rxq.mrwq.wq_id, 0u);  // set by the RSS QP
  EXPECT_NE(rxq.mcq.cq_id, 0u);
  EXPECT_NE(rxq.mcq.cq_id, txq.mcq.cq_id);
  EXPECT_EQ(rxq.mrwq.db_page, txq.mqp.db_page);  // one doorbell page per context
  EXPECT_EQ(Allocator::live(), 4);               // TX CQ, SQ, RX CQ, RQ
  PacketMemory mem;
  ASSERT_TRUE(mem.reg(port.pd, 1 << 16)) << strerror(errno);
  EXPECT_EQ(mem.mr->lkey, mem.mr->rkey);
  EXPECT_EQ(mem.mr->addr, mem.base);
  std::string live = control("live 0");
  EXPECT_EQ(live,
            "ok {\"pds\":1,\"mrs\":1,\"cqs\":2,\"wqs\":1,\"sqs\":1,\"rss_qps\":1,\"contexts\":1}");
  // Teardown in DPDK's order (stop TX, stop RX, close).
  txq.destroy();
  rxq.destroy();
  mem.dereg();
  port.close();
  EXPECT_EQ(txq.qp, nullptr);
  EXPECT_EQ(rxq.rss, nullptr);
  EXPECT_EQ(port.ctx, nullptr);
  expect_all_freed(0);
}

TEST(TrapObjects, DpdkSequence) { check_dpdk_sequence(); }
TEST(PollObjects, DpdkSequence) { check_dpdk_sequence(); }
TEST(SplitObjects, DpdkSequence) { check_dpdk_sequence(); }

ibv_qp* raw_qp(ibv_pd* pd, ibv_cq* cq, uint32_t wr, uint32_t sge) {
  ibv_qp_init_attr attr{};
  attr.send_cq = attr.recv_cq = cq;
  attr.cap.max_send_wr = wr;
  attr.cap.max_send_sge = sge;
  attr.qp_type = IBV_QPT_RAW_PACKET;
  return ibv_create_qp(pd, &attr);
}

ibv_wq* wq(PortObjects& port, ibv_cq* cq, uint32_t wr, uint32_t sge) {
  ibv_wq_init_attr attr{};
  attr.wq_type = IBV_WQT_RQ;
  attr.max_wr = wr;
  attr.max_sge = sge;
  attr.pd = port.ppd;
  attr.cq = cq;
  return ibv_create_wq(port.ctx, &attr);
}

TEST(TrapObjects, LibmanaErrorPaths) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1));
  // No allocator: CQs fail (RC-44), then raw QPs and WQs.
  EXPECT_FAILS_WITH(ibv_create_cq(port.ctx, 64, nullptr, nullptr, 0), EINVAL);
  ASSERT_EQ(port.set_allocators(), 0);
  manadv_ctx_allocators a = Allocator::callbacks();
  EXPECT_EQ(manadv_set_context_attr(port.ctx, static_cast<manadv_set_ctx_attr_type>(1), &a),
            EOPNOTSUPP);
  ibv_cq* cq = ibv_create_cq(port.ctx, 256, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  manadv_ctx_allocators none{};
  ASSERT_EQ(manadv_set_context_attr(port.ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &none), 0);
  EXPECT_FAILS_WITH(raw_qp(port.ppd, cq, 64, 15), EINVAL);
  EXPECT_FAILS_WITH(wq(port, cq, 64, 1), EINVAL);
  ASSERT_EQ(manadv_set_context_attr(port.ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &a), 0);
  // rdma-core 44's 256-entry and WQE-size limits.
  EXPECT_FAILS_WITH(ibv_create_cq(port.ctx, 257, nullptr, nullptr, 0), EINVAL);
  EXPECT_FAILS_WITH(raw_qp(port.ppd, cq, 257, 15), EINVAL);
  EXPECT_FAILS_WITH(raw_qp(port.ppd, cq, 64, 32), EINVAL);
  EXPECT_FAILS_WITH(wq(port, cq, 257, 1), EINVAL);
  EXPECT_FAILS_WITH(wq(port, cq, 64, 16), EINVAL);
  // Raw QPs need a parent domain.
  EXPECT_FAILS_WITH(raw_qp(port.pd, cq, 64, 15), EINVAL);
  // manadv_init_obj accepts only the QP, CQ and RWQ bits.
  manadv_cq mcq{};
  manadv_obj obj{};
  obj.cq.in = cq;
  obj.cq.out = &mcq;
  EXPECT_EQ(manadv_init_obj(&obj, MANADV_OBJ_CQ | 8), EINVAL);
  ASSERT_EQ(manadv_init_obj(&obj, MANADV_OBJ_CQ), 0);
  EXPECT_EQ(mcq.count, 256u);
  EXPECT_EQ(mcq.cq_id, 0u);         // no queue bound yet (RC-44)
  EXPECT_EQ(Allocator::live(), 1);  // failed creations returned their buffers
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  port.close();
  EXPECT_EQ(port.ctx, nullptr);
  expect_all_freed(0);
}

TEST(TrapObjects, KernelErrorPaths) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1));
  ASSERT_EQ(port.set_allocators(), 0);
  ibv_cq* cq = ibv_create_cq(port.ctx, 64, nullptr, nullptr, 0);
  ibv_cq* cq2 = ibv_create_cq(port.ctx, 64, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ASSERT_NE(cq2, nullptr);
  ibv_qp* qp = raw_qp(port.ppd, cq, 64, 15);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  // Another PD on the same port: the vPort has an owner (doc/hardware.md §6.2).
  ibv_pd* pd2 = ibv_alloc_pd(port.ctx);
  ASSERT_NE(pd2, nullptr);
  ibv_parent_domain_init_attr pattr{};
  pattr.pd = pd2;
  pattr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
  pattr.pd_context = reinterpret_cast<void*>(uintptr_t{1});
  ibv_pd* ppd2 = ibv_alloc_parent_domain(port.ctx, &pattr);
  ASSERT_NE(ppd2, nullptr);
  EXPECT_FAILS_WITH(raw_qp(ppd2, cq2, 64, 15), ENODEV);
  // The port whose kernel netdev is up (IB port 3).
  pattr.pd_context = reinterpret_cast<void*>(uintptr_t{3});
  ibv_pd* ppd3 = ibv_alloc_parent_domain(port.ctx, &pattr);
  ASSERT_NE(ppd3, nullptr);
  EXPECT_FAILS_WITH(raw_qp(ppd3, cq2, 64, 15), ENODEV);
  // In-use objects cannot go.
  EXPECT_EQ(ibv_destroy_cq(cq), EBUSY);
  EXPECT_EQ(ibv_dealloc_pd(port.pd), EBUSY);
  // An RSS key longer than 40 bytes.
  ibv_wq* w = wq(port, cq2, 64, 1);
  ASSERT_NE(w, nullptr);
  ibv_rwq_ind_table_init_attr ind_attr{};
  ind_attr.ind_tbl = &w;
  ibv_rwq_ind_table* ind = ibv_create_rwq_ind_table(port.ctx, &ind_attr);
  ASSERT_NE(ind, nullptr);
  uint8_t key[41] = {};
  ibv_qp_init_attr_ex rss{};
  rss.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE;
  rss.qp_type = IBV_QPT_RAW_PACKET;
  rss.pd = port.ppd;
  rss.rwq_ind_tbl = ind;
  rss.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
  rss.rx_hash_conf.rx_hash_key_len = sizeof(key);
  rss.rx_hash_conf.rx_hash_key = key;
  EXPECT_FAILS_WITH(ibv_create_qp_ex(port.ctx, &rss), EINVAL);

  EXPECT_EQ(ibv_destroy_rwq_ind_table(ind), 0);
  EXPECT_EQ(ibv_destroy_wq(w), 0);
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_destroy_cq(cq2), 0);
  EXPECT_EQ(ibv_dealloc_pd(ppd3), 0);
  EXPECT_EQ(ibv_dealloc_pd(ppd2), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd2), 0);
  port.close();
  EXPECT_EQ(port.ctx, nullptr);
  expect_all_freed(0);
}

TEST(TrapObjects, CompletionChannelInUse) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1));
  ASSERT_EQ(port.set_allocators(), 0);
  ibv_comp_channel* ch = ibv_create_comp_channel(port.ctx);
  ASSERT_NE(ch, nullptr);
  ibv_cq* cq = ibv_create_cq(port.ctx, 64, nullptr, ch, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq->channel, ch);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), EBUSY);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
  port.close();
  expect_all_freed(0);
}

TEST(TrapObjects, TwoQueuesOfAKindOnOneContext) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1));
  TxQueue t1, t2;
  ASSERT_EQ(t1.create(port, 64), 0);
  ASSERT_EQ(t2.create(port, 64), 0);  // trap mode sees every store: no single-writer rule
  EXPECT_NE(t1.mqp.sq_id, t2.mqp.sq_id);
  t2.destroy();
  t1.destroy();
  port.close();
  expect_all_freed(0);
}

TEST(PollObjects, SecondQueueOfAKindOnOneContextIsRefused) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1));
  TxQueue t1, t2;
  ASSERT_EQ(t1.create(port, 64), 0);
  testing::internal::CaptureStderr();
  const int rc = t2.create(port, 64);
  std::string message = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, EINVAL);
  EXPECT_NE(message.find("lost"), std::string::npos) << message;
  EXPECT_NE(message.find("--doorbell trap"), std::string::npos) << message;
  ibv_cq* cq = ibv_create_cq(port.ctx, 64, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ibv_wq* w1 = wq(port, cq, 64, 1);
  ASSERT_NE(w1, nullptr);
  testing::internal::CaptureStderr();
  EXPECT_FAILS_WITH(wq(port, cq, 64, 1), EINVAL);
  message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("--doorbell trap"), std::string::npos) << message;
  EXPECT_EQ(ibv_destroy_wq(w1), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  t2.destroy();
  t1.destroy();
  port.close();
  expect_all_freed(0);
}

TEST(SplitObjects, RnicDeviceRefusesRawQps) {
  ibv_device** list = ibv_get_device_list(nullptr);
  ibv_device* rnic = nullptr;
  for (int i = 0; list[i] != nullptr; ++i) {
    if (std::string(ibv_get_device_name(list[i])) == "mana_0") rnic = list[i];
  }
  ASSERT_NE(rnic, nullptr);
  PortObjects port;
  ASSERT_TRUE(port.open(rnic, 1));
  ASSERT_EQ(port.set_allocators(), 0);
  ibv_cq* cq = ibv_create_cq(port.ctx, 64, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_FAILS_WITH(raw_qp(port.ppd, cq, 64, 15), EOPNOTSUPP);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  port.close();
  ibv_free_device_list(list);
  expect_all_freed(0);
}

TEST(Limits2025Objects, DeviceLimitsInsteadOfRdmaCore44) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1));
  ASSERT_EQ(port.set_allocators(), 0);
  ibv_cq* cq = ibv_create_cq(port.ctx, 2048, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr) << strerror(errno);
  EXPECT_FAILS_WITH(ibv_create_cq(port.ctx, 2049, nullptr, nullptr, 0), EINVAL);
  ibv_qp* qp = raw_qp(port.ppd, cq, 1024, 15);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  manadv_qp mqp{};
  manadv_obj obj{};
  obj.qp.in = qp;
  obj.qp.out = &mqp;
  ASSERT_EQ(manadv_init_obj(&obj, MANADV_OBJ_QP), 0);
  EXPECT_EQ(mqp.sq_count, 1024u);
  EXPECT_EQ(mqp.sq_size, 256u * 1024u);
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  port.close();
  expect_all_freed(0);
}

}  // namespace
}  // namespace mana::emu::test

namespace mana::emu::test {
namespace {

// RSS over four WQs (log size 2): the RSS QP gives every WQ and its CQ a hardware id.
TEST(TrapObjects, RssOverFourWqs) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 2));
  ASSERT_EQ(port.set_allocators(), 0);
  TxQueue txq;  // the raw QP configures the vPort (raw-qp-first)
  ASSERT_EQ(txq.create(port, 64), 0);
  ibv_cq* cqs[4];
  ibv_wq* wqs[4];
  for (int i = 0; i < 4; ++i) {
    cqs[i] = ibv_create_cq(port.ctx, 128, nullptr, nullptr, 0);
    ASSERT_NE(cqs[i], nullptr);
    wqs[i] = wq(port, cqs[i], 128, 1);
    ASSERT_NE(wqs[i], nullptr);
  }
  ibv_rwq_ind_table_init_attr ind_attr{};
  ind_attr.log_ind_tbl_size = 2;
  ind_attr.ind_tbl = wqs;
  ibv_rwq_ind_table* ind = ibv_create_rwq_ind_table(port.ctx, &ind_attr);
  ASSERT_NE(ind, nullptr);
  uint8_t key[40] = {1, 2, 3};
  ibv_qp_init_attr_ex rss{};
  rss.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE;
  rss.qp_type = IBV_QPT_RAW_PACKET;
  rss.pd = port.ppd;
  rss.rwq_ind_tbl = ind;
  rss.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
  rss.rx_hash_conf.rx_hash_key_len = sizeof(key);
  rss.rx_hash_conf.rx_hash_key = key;
  ibv_qp* qp = ibv_create_qp_ex(port.ctx, &rss);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  std::vector<uint32_t> ids;
  for (int i = 0; i < 4; ++i) {
    manadv_rwq mrwq{};
    manadv_cq mcq{};
    manadv_obj obj{};
    obj.cq.in = cqs[i];
    obj.cq.out = &mcq;
    obj.rwq.in = wqs[i];
    obj.rwq.out = &mrwq;
    ASSERT_EQ(manadv_init_obj(&obj, MANADV_OBJ_CQ | MANADV_OBJ_RWQ), 0);
    EXPECT_EQ(mrwq.count, 128u);
    EXPECT_EQ(mrwq.size, 4096u);
    ids.push_back(mrwq.wq_id);
    ids.push_back(mcq.cq_id);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_NE(ids[i], 0u);
    for (size_t j = 0; j < i; ++j) EXPECT_NE(ids[i], ids[j]);
  }
  const std::string counters = control("counters 0");
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(counters.find("{\"id\":" + std::to_string(ids[2 * i]) + ","), std::string::npos)
        << counters;
  }
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_NE(control("counters 0").find("\"rqs\":[]"), std::string::npos);
  EXPECT_EQ(ibv_destroy_rwq_ind_table(ind), 0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ibv_destroy_wq(wqs[i]), 0);
    EXPECT_EQ(ibv_destroy_cq(cqs[i]), 0);
  }
  txq.destroy();
  port.close();
  expect_all_freed(0);
}

TEST(TrapObjects, MemoryRegistrationEntryPoints) {
  Probe probe;
  PortObjects port;
  ASSERT_TRUE(port.open(probe.dev(), 1));
  std::vector<uint8_t> buf(1 << 20);
  const uint64_t va = reinterpret_cast<uintptr_t>(buf.data());
  ibv_mr* mr = ibv_reg_mr_iova2(port.pd, buf.data(), buf.size(), va, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr) << strerror(errno);
  EXPECT_EQ(mr->lkey, mr->rkey);
  EXPECT_NE(mr->lkey, 0xFFFFFFFFu);
  EXPECT_EQ(mr->pd, port.pd);
  EXPECT_EQ(mr->length, buf.size());
  // MANA MRs are process-virtual: the device has no separate IO virtual address.
  EXPECT_FAILS_WITH(ibv_reg_mr_iova2(port.pd, buf.data(), 4096, va + 4096, IBV_ACCESS_LOCAL_WRITE),
                    EINVAL);
  // The inline with a non-constant access goes through ibv_reg_mr_iova2 as well.
  volatile int access = IBV_ACCESS_LOCAL_WRITE;
  ibv_mr* mr2 = ibv_reg_mr(port.pd, buf.data(), 4096, access);
  ASSERT_NE(mr2, nullptr);
  EXPECT_NE(mr2->lkey, mr->lkey);
  EXPECT_EQ(control("live 0"),
            "ok {\"pds\":1,\"mrs\":2,\"cqs\":0,\"wqs\":0,\"sqs\":0,\"rss_qps\":0,\"contexts\":1}");
  EXPECT_EQ(ibv_dereg_mr(mr2), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  port.close();
  expect_all_freed(0);
}

}  // namespace
}  // namespace mana::emu::test
