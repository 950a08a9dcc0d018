// SPDX-License-Identifier: BSD-3-Clause
// An RX queue on fake rings (see fake_nic.h): an RQ of one-BU WQEs, its CQ written by the test as
// the NIC, and the mbuf slots, started with a full ring of mbufs from the port's pool. Shared by
// the RX burst unit test and the RX completion fuzz test.
#pragma once

#include <vector>

#include <gtest/gtest.h>

#include "fake_nic.h"
#include "rx_queue.h"

namespace mana_test {

class FakeRxQueue {
 public:
  // `ring`: a power of two of at most 128 WQEs (the RQ ring is one 4 KiB page). `free_thresh`:
  // the refill threshold (1: the ring is full again after every burst).
  FakeRxQueue(uint32_t ring, uint32_t rq_id, uint32_t cq_id, uint32_t free_thresh = 1)
      : cq(ring), rq_id_(rq_id), cq_id_(cq_id), free_thresh_(free_thresh), slots_(ring, nullptr) {}

  // Sets the queue up on `state`'s port and posts `ring` mbufs from its pool (fails the test if
  // the pool runs dry).
  void start(FakePortState& state) {
    const auto ring = static_cast<uint32_t>(slots_.size());
    q = mana::RxQueue{};
    mana::gate_open(q.gate);
    q.rq = mana::WorkQueue{rq_mem_.p, static_cast<uint32_t>(rq_mem_.size - 1), ring, 0, 0, rq_id_};
    q.cq = cq.consumer(cq_id_);
    q.mbufs = slots_.data();
    q.desc_mask = ring - 1;
    q.buf_len = RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM;
    q.port_id = kFakePortId;
    q.mp = state.pool;
    q.priv = &state.priv;
    q.free_thresh = free_thresh_;
    mana::mr_queue_cache_reset(q.mr);
    ASSERT_EQ(mana::rx_ring_fill(q, state.pp.registrar), 0);
  }
  // Frees the mbufs the queue owns.
  void stop() { mana::rx_ring_free(q); }

  // The NIC's view: the SGE of the RQ WQE with index `wqe` (every RX WQE is one BU).
  mana::hw::Sge wqe_sge(uint32_t wqe) const {
    mana::hw::Sge sge;
    std::memcpy(&sge, rq_mem_.p + ((wqe * 32 + 16) & (rq_mem_.size - 1)), sizeof(sge));
    return sge;
  }
  uint32_t rq_id() const { return rq_id_; }
  const std::vector<rte_mbuf*>& slots() const { return slots_; }

  mana::RxQueue q{};
  FakeCq cq;

 private:
  AlignedMemory rq_mem_{4096};
  uint32_t rq_id_;
  uint32_t cq_id_;
  uint32_t free_thresh_;
  std::vector<rte_mbuf*> slots_;
};

}  // namespace mana_test
