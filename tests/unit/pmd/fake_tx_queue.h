// SPDX-License-Identifier: BSD-3-Clause
// A TX queue on fake rings (see fake_nic.h): an SQ (one 4 KiB page unless given), its CQ written by
// the test as the NIC, and the descriptor ring; and a test fixture with one such queue. Shared by
// the TX burst unit test and the TX completion fuzz test.
#pragma once

#include <vector>

#include "fake_port.h"
#include "priv.h"
#include "tx_queue.h"

namespace mana_test {

class FakeTxQueue {
 public:
  // `ring`: descriptors and CQ entries, a power of two; `sq_bytes`: a power of two >= 4096.
  FakeTxQueue(uint32_t ring, uint32_t sq_id, uint32_t cq_id, size_t sq_bytes = 4096)
      : cq(ring),
        sq_mem_(sq_bytes),
        sq_id_(sq_id),
        cq_id_(cq_id),
        descs_(ring, mana::TxDesc{}),
        mbufs_(ring, nullptr) {}

  void start(FakePortState& state) {
    mana::gate_open(q.gate);
    q.sq = mana::WorkQueue{sq_mem_.p,
                           static_cast<uint32_t>(sq_mem_.size - 1),
                           static_cast<uint32_t>(sq_mem_.size / mana::hw::kBasicUnit),
                           0,
                           0,
                           sq_id_};
    q.cq = cq.consumer(cq_id_);
    q.descs = descs_.data();
    q.mbufs = mbufs_.data();
    q.desc_mask = static_cast<uint32_t>(descs_.size()) - 1;
    mana::set_tx_oob(q, cq_id_, sq_id_, 0);
    q.max_sge = 15;
    q.max_segs = 1;
    // tx_queue_setup's defaults: a CQE requested and completions reclaimed at every burst.
    q.rs_thresh = mana::kDefaultTxRsThresh;
    q.reclaim_below = q.desc_mask + 2;
    q.port_id = kFakePortId;
    q.priv = &state.priv;
    mana::mr_queue_cache_reset(q.mr);
  }
  // Frees the mbufs of the descriptors not completed (a completed entry keeps a stale pointer).
  void stop() {
    for (; q.desc_tail != q.desc_head; q.desc_tail++) {
      rte_pktmbuf_free(mbufs_[q.desc_tail & q.desc_mask]);
      mbufs_[q.desc_tail & q.desc_mask] = nullptr;
    }
  }

  // The NIC's view of the SQ.
  const uint8_t* sq_ring() const { return sq_mem_.p; }
  uint32_t sq_ring_mask() const { return static_cast<uint32_t>(sq_mem_.size - 1); }
  uint32_t sq_id() const { return sq_id_; }
  uint32_t cq_id() const { return cq_id_; }

  mana::TxQueue q{};
  FakeCq cq;

 private:
  AlignedMemory sq_mem_;
  uint32_t sq_id_;
  uint32_t cq_id_;
  std::vector<mana::TxDesc> descs_;
  std::vector<rte_mbuf*> mbufs_;
};

// A port with one started TX queue.
class FakeTxPort : public FakePort {
 public:
  static constexpr uint32_t kRing = 64;
  static constexpr uint32_t kSqId = 0x2345;
  static constexpr uint32_t kCqId = 0x77;

 protected:
  void SetUp() override {
    FakePort::SetUp();
    txq_.start(state_);
  }
  void TearDown() override {
    txq_.stop();
    FakePort::TearDown();
  }

  FakeTxQueue txq_{kRing, kSqId, kCqId};
  mana::TxQueue& q_ = txq_.q;
  FakeCq& cq_ = txq_.cq;
};

}  // namespace mana_test
