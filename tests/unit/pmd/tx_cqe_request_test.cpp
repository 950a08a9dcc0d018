// SPDX-License-Identifier: BSD-3-Clause
// CQE requests keep every TX queue completing (doc/hardware.md §4.9, doc/guide.md "TX
// thresholds"): over ring sizes, SQ sizes, tx_rs_thresh values, segment counts, burst sizes and
// the three OOB forms (short, long for a VLAN tag, long for a vPort offset above 255), the test
// plays a NIC that completes exactly the WQEs that asked for a CQE, and checks after every burst
// that the queue never holds only suppressed WQEs with no room for another WQE (it would never
// complete again), and that it keeps sending.
#include <cstdio>
#include <string>
#include <vector>

#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_tx_queue.h"

namespace {

using namespace mana;

constexpr uint32_t kSqId = 0x2345;
constexpr uint32_t kCqId = 0x77;
constexpr uint32_t kMaxSge = 15;  // what the fake queue takes (FakeTxQueue::start)

enum class Oob { kShort, kVlan, kVportLong };
const char* oob_name(Oob o) {
  return o == Oob::kShort ? "short" : o == Oob::kVlan ? "long (VLAN tag)" : "long (vPort offset)";
}

struct Combo {
  uint32_t ring;
  size_t sq_bytes;
  uint32_t rs_thresh;
  unsigned segs;
  Oob oob;
  unsigned burst;
  std::string name() const {
    char s[160];
    snprintf(s, sizeof(s), "ring %u, SQ %zu B, tx_rs_thresh %u, %u segments, %s OOB, burst %u",
             ring, sq_bytes, rs_thresh, segs, oob_name(oob), burst);
    return s;
  }
};

class TxCqeRequest : public mana_test::FakePort {
 protected:
  void SetUp() override {
    FakePort::SetUp();
    // Small segments, enough for the largest ring full of 15-segment packets.
    segs_pool_ = rte_pktmbuf_pool_create("cqe_request_segs", 16383, 256, 0,
                                         RTE_PKTMBUF_HEADROOM + 64, SOCKET_ID_ANY);
    ASSERT_NE(segs_pool_, nullptr);
  }
  void TearDown() override {
    rte_mempool_free(segs_pool_);
    FakePort::TearDown();
  }

  rte_mbuf* packet(unsigned segs, bool vlan) {
    rte_mbuf* head = nullptr;
    for (unsigned s = 0; s < segs; s++) {
      rte_mbuf* m = rte_pktmbuf_alloc(segs_pool_);
      if (m == nullptr) {
        rte_pktmbuf_free(head);
        return nullptr;
      }
      rte_pktmbuf_append(m, 64);
      if (head == nullptr)
        head = m;
      else
        rte_pktmbuf_chain(head, m);
    }
    if (vlan) {
      head->ol_flags |= RTE_MBUF_F_TX_VLAN;
      head->vlan_tci = 7;
    }
    return head;
  }

  // The NIC: reads the WQEs posted since its last visit from the SQ ring (size from the header,
  // suppression from the OOB) and writes an okay CQE, naming the WQE in basic units, for each one
  // that asked for a CQE.
  static void nic_process(mana_test::FakeTxQueue& txq, uint32_t& nic_bu) {
    const TxQueue& q = txq.q;
    while (nic_bu != q.sq.head_bu) {
      const uint8_t* wqe = txq.sq_ring() + ((nic_bu * hw::kBasicUnit) & txq.sq_ring_mask());
      hw::WqeHeader h;
      std::memcpy(&h, wqe, sizeof(h));
      hw::TxShortOob oob;
      std::memcpy(&oob, wqe + sizeof(h), sizeof(oob));
      if (!hw::TxShortOob::SuppressCqe::get(oob.dw0)) {
        const uint32_t at = nic_bu;
        txq.cq.produce([at](hw::Cqe& e) {
          e.dw[0] = hw::Cqe::ClientType::set(hw::kCqeTxOkay, hw::kClientTypeCompletion);
          e.dw[hw::Cqe::kTxWqeOffsetDword] =
              hw::Cqe::TxWqeOffset::set(0, at & hw::Cqe::TxWqeOffset::kMask);
          e.dw[hw::Cqe::kOwnerDword] = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kSqId), 1);
        });
      }
      nic_bu += hw::wqe_size_bu(h.oob_bytes(), h.num_sge());
    }
  }

  // Sends 3 rings' worth of packets in bursts; fails on the first burst after which the queue is
  // stuck, or when bursts stop sending.
  void run(const Combo& c) {
    mana_test::FakeTxQueue txq(c.ring, kSqId, kCqId, c.sq_bytes);
    txq.start(state_);
    TxQueue& q = txq.q;
    q.rs_thresh = static_cast<uint16_t>(c.rs_thresh);
    q.max_segs = q.max_sge;
    if (c.oob == Oob::kVportLong) q.oob = make_tx_oob_template(kCqId, kSqId, 300);
    const uint64_t offloads =
        RTE_ETH_TX_OFFLOAD_MULTI_SEGS | (c.oob == Oob::kVlan ? RTE_ETH_TX_OFFLOAD_VLAN_INSERT : 0);
    const eth_tx_burst_t burst = select_tx_burst(offloads, c.oob == Oob::kVportLong);
    const uint32_t largest =
        hw::wqe_size_bu(c.oob == Oob::kShort ? hw::kShortOobSize : hw::kLongOobSize, kMaxSge);
    uint32_t nic_bu = q.sq.head_bu;
    uint64_t sent = 0;
    std::vector<rte_mbuf*> pkts;
    for (unsigned round = 0; sent < 3ull * c.ring; round++) {
      pkts.clear();
      for (unsigned i = 0; i < c.burst; i++) {
        rte_mbuf* m = packet(c.segs, c.oob == Oob::kVlan);
        ASSERT_NE(m, nullptr) << "test pool too small";
        pkts.push_back(m);
      }
      const uint16_t n = burst(&q, pkts.data(), static_cast<uint16_t>(pkts.size()));
      for (size_t i = n; i < pkts.size(); i++) rte_pktmbuf_free(pkts[i]);
      sent += n;
      nic_process(txq, nic_bu);
      burst(&q, nullptr, 0);  // the application's reclaim: takes every CQE the NIC wrote
      const uint32_t outstanding = q.desc_head - q.desc_tail;
      bool all_suppressed = outstanding != 0;
      for (uint32_t i = q.desc_tail; i != q.desc_head; i++)
        all_suppressed = all_suppressed && q.descs[i & q.desc_mask].suppressed;
      const bool no_room = wq_free_bu(q.sq) < largest || outstanding == c.ring;
      ASSERT_FALSE(all_suppressed && no_room)
          << c.name() << ": after burst " << round << " (" << sent << " packets sent), all "
          << outstanding << " outstanding WQEs are suppressed and the SQ has " << wq_free_bu(q.sq)
          << " free basic units for a WQE of up to " << largest << ": nothing completes again";
      ASSERT_LT(round, 3 * c.ring) << c.name() << ": bursts stopped sending";
    }
    // Everything completes once the NIC completes what asked for a CQE, and one more burst.
    nic_process(txq, nic_bu);
    burst(&q, nullptr, 0);
    txq.stop();
  }

  rte_mempool* segs_pool_ = nullptr;
};

TEST_F(TxCqeRequest, EveryQueueKeepsCompleting) {
  unsigned combos = 0;
  for (const uint32_t ring : {64u, 256u}) {
    // The smallest SQ the driver accepts (one basic unit per descriptor, tx_queue.cpp) and the
    // SQ libmana and the emulator make for 15 SGEs (256 B per WQE).
    for (const size_t sq : {size_t{ring} * hw::kBasicUnit, size_t{ring} * 256}) {
      const size_t sq_bytes = sq < 4096 ? 4096 : sq;
      for (const uint32_t rs : {1u, 2u, 7u, ring / 4, ring / 2, ring - 9, ring - 4, ring - 1}) {
        for (const unsigned segs : {1u, 2u, 8u, 14u, 15u}) {
          for (const Oob oob : {Oob::kShort, Oob::kVlan, Oob::kVportLong}) {
            for (const unsigned burst : {1u, 5u, 32u}) {
              ASSERT_NO_FATAL_FAILURE(run(Combo{ring, sq_bytes, rs, segs, oob, burst}));
              combos++;
            }
          }
        }
      }
    }
  }
  std::printf("tx cqe request: %u combinations keep completing\n", combos);
}

// The testpmd line (--txd=64 --txrs=60, 15 segments of 64 bytes, VLAN insert): the SQ of
// 64 * 256 B fills at 56 WQEs of 9 basic units, before 60 packets went without a CQE.
TEST_F(TxCqeRequest, FifteenSegmentVlanPacketsOnA64Ring) {
  run(Combo{64, 64 * 256, 60, 15, Oob::kVlan, 32});
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
