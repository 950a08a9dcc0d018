// SPDX-License-Identifier: BSD-3-Clause
// The vector RX implementations against the scalar one (burst.h RxSimd): two queues on two pools
// of the same shape get the same CQE streams, bursts, mbuf frees and pool exhaustion; after every
// burst the returned count, every delivered mbuf (which one, its metadata and its first bytes),
// the counters and the ring must be the same. The streams mix long runs of the completions the
// kernels take (so that groups of four form, in and out of step with the ring's wrap) with every
// other kind: coalesced and zero-length CQEs, error types, oversize lengths, flag changes, tags to
// put back, misdirected, stale and overflowed entries, and offload changes. The vector queue's pool
// is laid out as the scalar one's, with a private area, or with its buffers moved into that area
// (where a kernel that assumed the layout would post the wrong addresses). A variant this CPU or
// build lacks is skipped, visibly.
#include <array>
#include <cstring>
#include <iterator>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "../fuzz/fuzz_walk.h"
#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_rx_queue.h"

namespace {

using namespace mana;
using mana::fuzz::FuzzInput;

constexpr uint32_t kRing = 64;
constexpr uint32_t kRqId = 0x1234;
constexpr uint32_t kSeed = 20261207;
constexpr unsigned kSteps = 60000;
constexpr unsigned kCompared = 32;  // leading bytes of each delivered frame compared

// Flags words (CQE dw1) the stream draws from: one-bit hash types (the CQE names L3 and L4),
// composite ones and none (the L3 type comes from the frame), checksum bits, a VLAN tag.
constexpr uint32_t kFlags[] = {
    0,
    hw::Cqe::RxHashType::set(0, hw::kHashTcpIpv4) | hw::Cqe::RxIpCsumOk::set(0, 1) |
        hw::Cqe::RxTcpCsumOk::set(0, 1),
    hw::Cqe::RxHashType::set(0, hw::kHashUdpIpv6) | hw::Cqe::RxUdpCsumOk::set(0, 1),
    hw::Cqe::RxHashType::set(0, 0x049) | hw::Cqe::RxUdpCsumFail::set(0, 1),
    hw::Cqe::RxHashType::set(0, 0x1B6) | hw::Cqe::RxIpCsumFail::set(0, 1),
    hw::Cqe::RxHashType::set(0, hw::kHashIpv4) | hw::Cqe::RxVlanPresent::set(0, 1) |
        hw::Cqe::RxVlanId::set(0, 0x123),
};
constexpr uint16_t kEthertypes[] = {0x0800, 0x86DD, 0x0806, 0x8100};

// One of the two queues: its pool, and each mbuf's index in the pool (the same in both pools,
// which are created alike and used alike).
struct Side {
  Side() : rxq(kRing, kRqId, 9, 8) {}  // refilled every 8 WQEs: runs of any length
  mana_test::FakeRxQueue rxq;
  rte_mempool* pool = nullptr;
  std::unordered_map<const rte_mbuf*, unsigned> index;
  std::vector<rte_mbuf*> held;  // delivered, not yet freed
  std::vector<rte_mbuf*> hog;   // taken from the pool to starve the refill
  eth_rx_burst_t burst = nullptr;
};

// How the vector queue's pool keeps its buffers.
enum class PoolLayout { kPlain, kPrivateArea, kMovedBuffers };
constexpr uint16_t kPrivateArea = 64;
using Variant = std::tuple<RxSimd, PoolLayout>;

class RxVectorEquivalence : public mana_test::FakePort,
                            public ::testing::WithParamInterface<Variant> {
 protected:
  void SetUp() override {
    if (!rx_simd_supported(simd()))
      GTEST_SKIP() << rx_simd_name(simd()) << ": not in this build or not on this CPU";
    FakePort::SetUp();
    ref_.pool = pool_;
    char name[32];
    snprintf(name, sizeof(name), "vec_pool_%u", pool_serial_++);
    const PoolLayout layout = std::get<1>(GetParam());
    vec_.pool =
        rte_pktmbuf_pool_create(name, kPoolSize, 0, layout == PoolLayout::kPlain ? 0 : kPrivateArea,
                                RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    ASSERT_NE(vec_.pool, nullptr);
    if (layout == PoolLayout::kMovedBuffers)  // each buffer starts in its mbuf's private area
      rte_mempool_obj_iter(
          vec_.pool,
          [](rte_mempool*, void*, void* obj, unsigned) {
            auto* m = static_cast<rte_mbuf*>(obj);
            m->buf_addr = static_cast<uint8_t*>(m->buf_addr) - kPrivateArea;
          },
          nullptr);
    for (Side* s : {&ref_, &vec_}) {
      rte_mempool_obj_iter(
          s->pool,
          [](rte_mempool*, void* arg, void* obj, unsigned i) {
            (*static_cast<std::unordered_map<const rte_mbuf*, unsigned>*>(
                arg))[static_cast<const rte_mbuf*>(obj)] = i;
          },
          &s->index);
      state_.pool = s->pool;
      s->rxq.start(state_);
    }
    state_.pool = ref_.pool;
    // Where the queue takes each frame from: the pool's layout, or every buf_addr.
    const uint32_t at_mbuf_end = sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM;
    EXPECT_EQ(ref_.rxq.q.frame_offset, at_mbuf_end);
    EXPECT_EQ(vec_.rxq.q.frame_offset, layout == PoolLayout::kPlain ? at_mbuf_end
                                       : layout == PoolLayout::kPrivateArea
                                           ? at_mbuf_end + kPrivateArea
                                           : 0u);
    select_offloads(7);
  }
  void TearDown() override {
    if (vec_.pool == nullptr) return;  // skipped
    for (Side* s : {&ref_, &vec_}) {
      rte_pktmbuf_free_bulk(s->held.data(), static_cast<unsigned>(s->held.size()));
      rte_pktmbuf_free_bulk(s->hog.data(), static_cast<unsigned>(s->hog.size()));
      s->rxq.stop();
    }
    rte_mempool_free(vec_.pool);
    FakePort::TearDown();
  }

  static RxSimd simd() { return std::get<0>(GetParam()); }

  void select_offloads(uint32_t bits) {
    const uint64_t offloads = ((bits & 1) ? RTE_ETH_RX_OFFLOAD_CHECKSUM : 0) |
                              ((bits & 2) ? RTE_ETH_RX_OFFLOAD_RSS_HASH : 0) |
                              ((bits & 4) ? RTE_ETH_RX_OFFLOAD_VLAN_STRIP : 0);
    ref_.burst = select_rx_burst(offloads, RxSimd::kScalar);
    vec_.burst = select_rx_burst(offloads, simd());
    ASSERT_NE(ref_.burst, vec_.burst);
  }

  // The pool index of a slot's mbuf, with the recycled tag (rx_queue.h) in bit 31.
  uint32_t slot_id(const Side& s, const rte_mbuf* tagged) const {
    const auto v = reinterpret_cast<uintptr_t>(tagged);
    const auto it = s.index.find(reinterpret_cast<const rte_mbuf*>(v & ~kRecycledTag));
    EXPECT_NE(it, s.index.end()) << "a slot holds no mbuf of the pool";
    return (it == s.index.end() ? ~0u : it->second) | ((v & kRecycledTag) != 0 ? 1u << 31 : 0);
  }

  // A CQE the kernels take (okay, one packet that fits, `flags`) or, one time in `odd`, any other.
  hw::Cqe make_cqe(FuzzInput& in, uint32_t flags, unsigned odd) {
    hw::Cqe e{};
    const uint32_t buf = ref_.rxq.q.buf_len;
    e.dw[0] = hw::kCqeRxOkay;
    e.dw[1] = flags;
    e.rx_packet(0).dw0 = 1 + in.below(in.chance(4) ? buf : 1514);
    e.rx_packet(0).packet_hash = in.next();
    if (in.chance(3)) e.rx_packet(0).reserved = in.next();  // not read
    if (in.chance(4)) e.dw[0] |= in.next() & ~0x3fu;        // vendor bits, not read
    if (odd != 0 && in.chance(odd)) {
      switch (in.below(9)) {
        case 0:  // coalesced, 1..4 packets
        case 1: {
          e.dw[0] =
              hw::Cqe::Type::set(e.dw[0], in.chance(2) ? hw::kCqeRxCoalesced4 : hw::kCqeRxOkay);
          const unsigned count = 1 + in.below(hw::Cqe::kRxMaxPackets);
          for (unsigned k = 1; k < count; k++) {
            e.rx_packet(k).dw0 = 1 + in.below(1514);
            e.rx_packet(k).packet_hash = in.next();
          }
          break;
        }
        case 2:  // zero length: consumes nothing
          e.rx_packet(0).dw0 = 0;
          break;
        case 3:  // around and beyond the buffer's end, and the 16-bit field's garbage
          e.rx_packet(0).dw0 = buf - 2 + in.below(5) + (in.chance(2) ? in.next() & ~0xffffu : 0);
          break;
        case 4:  // an error or unknown type
          e.dw[0] = hw::Cqe::Type::set(
              e.dw[0],
              std::array<uint32_t, 5>{hw::kCqeInvalid, hw::kCqeRxObjectFence, hw::kCqeRxTruncated,
                                      hw::kCqeTxOkay, in.below(64)}[in.below(5)]);
          break;
        case 5:  // other flags
          e.dw[1] = in.chance(2) ? in.next() : kFlags[in.below(std::size(kFlags))];
          break;
        case 6:  // garbage anywhere but the binding
          for (unsigned d = 0; d < 15; d++)
            if (in.chance(3)) e.dw[d] = in.next();
          break;
        case 7:  // another queue, or the SQ bit
          e.dw[15] = in.chance(2) ? hw::Cqe::WqNum::set(0, kRqId + 1) : hw::Cqe::IsSq::set(0, 1);
          return e;
        default:  // a second packet entry only
          e.rx_packet(1).dw0 = in.below(3);
          break;
      }
    }
    e.dw[15] = hw::Cqe::WqNum::set(0, kRqId);
    return e;
  }

  uint32_t popped() const { return ref_.rxq.q.cq.head - kRing; }
  uint32_t cq_free() const {
    return kRing - static_cast<uint32_t>(ref_.rxq.cq.produced() - popped());
  }

  // The same CQEs into both CQs: a run under one flags word, mostly of the common kind.
  void produce(FuzzInput& in) {
    const uint32_t flags = kFlags[in.below(std::size(kFlags))];
    const unsigned odd = in.chance(3) ? 0 : 2 + in.below(40);
    for (unsigned i = 1 + in.below(40); i > 0 && cq_free() > 0; i--) {
      const hw::Cqe e = make_cqe(in, flags, odd);
      ref_.rxq.cq.produce(e);
      vec_.rxq.cq.produce(e);
    }
  }

  // The entry after the last produced one: stale (empty) or overflowed owner bits.
  void poison_next(FuzzInput& in) {
    if (cq_free() == 0) return;
    const uint32_t owner = ref_.rxq.cq.next_owner();
    const uint32_t bad = (in.chance(2) ? owner + 1 + in.below(6) : owner - 1) & hw::kOwnerMask;
    const hw::Cqe e = make_cqe(in, kFlags[1], 2);
    ref_.rxq.cq.write_next(e, bad);
    vec_.rxq.cq.write_next(e, bad);
  }

  // The frames the NIC wrote, where each posted WQE's SGE points (which must be its mbuf's
  // buffer after the headroom): an EtherType (the L3 type of CQEs that do not name it is read
  // there) and a pattern, by WQE index, the same in both rings.
  void write_frames(FuzzInput& in) {
    const unsigned pick = in.next();
    for (Side* s : {&ref_, &vec_}) {
      const RxQueue& q = s->rxq.q;
      for (uint32_t w = q.rq.tail_bu; w != q.rq.head_bu; w++) {
        const auto v = reinterpret_cast<uintptr_t>(q.mbufs[w & q.desc_mask]);
        auto* m = reinterpret_cast<rte_mbuf*>(v & ~kRecycledTag);
        auto* f = reinterpret_cast<uint8_t*>(s->rxq.wqe_sge(w).address);
        ASSERT_EQ(f, static_cast<uint8_t*>(m->buf_addr) + RTE_PKTMBUF_HEADROOM)
            << (s == &ref_ ? "scalar" : "vector") << " queue, WQE " << w;
        for (unsigned b = 0; b < kCompared; b++) f[b] = static_cast<uint8_t>(w * 7 + b);
        const uint16_t et = kEthertypes[(w + pick) % std::size(kEthertypes)];
        f[12] = static_cast<uint8_t>(et >> 8);
        f[13] = static_cast<uint8_t>(et);
      }
    }
  }

  // One burst of `want` on both queues; everything the application and the NIC see must agree.
  void burst(uint16_t want) {
    rte_mbuf* ref_pkts[128];
    rte_mbuf* vec_pkts[128];
    const uint16_t n = ref_.burst(&ref_.rxq.q, ref_pkts, want);
    const uint16_t n_vec = vec_.burst(&vec_.rxq.q, vec_pkts, want);
    ASSERT_EQ(n_vec, n) << "burst " << bursts_;
    for (uint16_t i = 0; i < n; i++) {
      const rte_mbuf* a = ref_pkts[i];
      const rte_mbuf* b = vec_pkts[i];
      const std::string at = "burst " + std::to_string(bursts_) + " packet " + std::to_string(i);
      ASSERT_EQ(slot_id(vec_, b), slot_id(ref_, a)) << at;
      ASSERT_EQ(b->data_off, a->data_off) << at;
      ASSERT_EQ(b->pkt_len, a->pkt_len) << at;
      ASSERT_EQ(b->data_len, a->data_len) << at;
      ASSERT_EQ(b->nb_segs, a->nb_segs) << at;
      ASSERT_EQ(b->port, a->port) << at;
      ASSERT_EQ(rte_mbuf_refcnt_read(b), rte_mbuf_refcnt_read(a)) << at;
      ASSERT_EQ(b->ol_flags, a->ol_flags) << at;
      ASSERT_EQ(b->packet_type, a->packet_type) << at;
      ASSERT_EQ(b->hash.rss, a->hash.rss) << at;
      ASSERT_EQ(b->vlan_tci, a->vlan_tci) << at;
      ASSERT_EQ(b->next, a->next) << at;
      ASSERT_EQ(std::memcmp(rte_pktmbuf_mtod(b, const void*), rte_pktmbuf_mtod(a, const void*),
                            RTE_MIN(a->data_len, kCompared)),
                0)
          << at;
      ref_.held.push_back(ref_pkts[i]);
      vec_.held.push_back(vec_pkts[i]);
    }
    const RxQueue& a = ref_.rxq.q;
    const RxQueue& b = vec_.rxq.q;
    const std::string at = "burst " + std::to_string(bursts_);
    ASSERT_EQ(std::memcmp(&b.stats, &a.stats, sizeof(a.stats)), 0) << at << ": counters";
    ASSERT_EQ(b.cq.head, a.cq.head) << at;
    ASSERT_EQ(b.cq.doorbell_head, a.cq.doorbell_head) << at;
    ASSERT_EQ(b.rq.head_bu, a.rq.head_bu) << at;
    ASSERT_EQ(b.rq.tail_bu, a.rq.tail_bu) << at;
    ASSERT_EQ(b.recycled, a.recycled) << at;
    ASSERT_EQ(b.partial_cqe == nullptr, a.partial_cqe == nullptr) << at;
    ASSERT_EQ(b.partial_next, a.partial_next) << at;
    ASSERT_EQ(b.meta.dw1, a.meta.dw1) << at;
    for (uint32_t w = 0; w < kRing; w++)
      ASSERT_EQ(slot_id(vec_, b.mbufs[w]), slot_id(ref_, a.mbufs[w])) << at << " slot " << w;
    ASSERT_EQ(rte_mempool_avail_count(vec_.pool), rte_mempool_avail_count(ref_.pool)) << at;
    bursts_++;
    packets_ += n;
  }

  void release_held(FuzzInput& in) {
    size_t kept = 0;
    for (size_t i = 0; i < ref_.held.size(); i++) {
      if (in.chance(2)) {
        rte_pktmbuf_free(ref_.held[i]);
        rte_pktmbuf_free(vec_.held[i]);
      } else {
        ref_.held[kept] = ref_.held[i];
        vec_.held[kept++] = vec_.held[i];
      }
    }
    ref_.held.resize(kept);
    vec_.held.resize(kept);
  }

  // Now and then takes every free mbuf of both pools (the refill fails: nombuf), or a few.
  void starve_or_feed(FuzzInput& in) {
    if (in.chance(8)) {
      const unsigned leave = in.chance(2) ? 0 : in.below(40);
      for (Side* s : {&ref_, &vec_}) {
        while (rte_mempool_avail_count(s->pool) > leave)
          s->hog.push_back(rte_pktmbuf_alloc(s->pool));
      }
    } else {
      for (Side* s : {&ref_, &vec_}) {
        rte_pktmbuf_free_bulk(s->hog.data(), static_cast<unsigned>(s->hog.size()));
        s->hog.clear();
      }
    }
  }

  Side ref_, vec_;
  unsigned bursts_ = 0;
  uint64_t packets_ = 0;
};

TEST_P(RxVectorEquivalence, SameResultsAsScalar) {
  const mana::fuzz::WalkResult walk = mana::fuzz::random_walk(kSeed, kSteps, [&](FuzzInput& in) {
    const uint32_t action = in.below(24);
    if (action < 8) {
      produce(in);
    } else if (action == 8) {
      poison_next(in);
    } else if (action < 11) {
      release_held(in);
    } else if (action == 11) {
      starve_or_feed(in);
    } else if (action == 12) {
      select_offloads(in.next());
    } else {
      write_frames(in);
      burst(static_cast<uint16_t>(in.chance(2) ? 32 : in.below(100)));
    }
    if (ref_.held.size() > 512) release_held(in);
  });
  std::printf(
      "%s vs scalar: seed %u, %u steps, %u bursts, %llu packets, %llu errors, %llu nombuf\n",
      rx_simd_name(simd()), walk.seed, walk.steps, bursts_,
      static_cast<unsigned long long>(packets_),
      static_cast<unsigned long long>(ref_.rxq.q.stats.errors),
      static_cast<unsigned long long>(ref_.rxq.q.stats.nombuf));
  // The kernels took part: most packets were of the common kind (5.6 a step at full scale, 5.8
  // at a tenth under qemu; the walk's steps follow MANA_FUZZ_SCALE).
  EXPECT_GT(packets_, uint64_t{walk.steps} * 4);
}

std::string variant_name(const ::testing::TestParamInfo<Variant>& info) {
  const RxSimd simd = std::get<0>(info.param);
  const char* const layouts[] = {"", "PrivateArea", "MovedBuffers"};
  return std::string(simd == RxSimd::kSse41  ? "Sse41"
                     : simd == RxSimd::kAvx2 ? "Avx2"
                                             : "Neon") +
         layouts[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(
    Variants, RxVectorEquivalence,
    ::testing::Combine(::testing::Values(RxSimd::kSse41, RxSimd::kAvx2, RxSimd::kNeon),
                       ::testing::Values(PoolLayout::kPlain, PoolLayout::kPrivateArea,
                                         PoolLayout::kMovedBuffers)),
    variant_name);

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
