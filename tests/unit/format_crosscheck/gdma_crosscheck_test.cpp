// SPDX-License-Identifier: BSD-3-Clause
// Our PMD's GDMA helpers (drivers/net/mana/gdma.h) against DPDK's own gdma.c run on the same
// memory: doorbell values and page offsets, WQEs written into a ring (with SGL wrap-around and the
// dummy SGE) and the CQ owner-bit protocol (doc/hardware.md §4.1, §4.2, §4.5, §4.8).
#include "dpdk_mana.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gdma.h"
#include "mana/gdma_format.h"

namespace {

namespace hw = mana::hw;

struct Page {  // page-aligned, zeroed memory standing in for a doorbell page or a queue ring
  // (aligned_alloc wants a whole number of pages)
  explicit Page(size_t n)
      : p(static_cast<uint8_t*>(std::aligned_alloc(4096, (n + 4095) & ~size_t{4095}))), size(n) {
    std::memset(p, 0, n);
  }
  ~Page() { std::free(p); }
  Page(const Page&) = delete;
  Page& operator=(const Page&) = delete;
  uint8_t* p;
  size_t size;
};

// Where two memory areas first differ, with both bytes there, for a readable failure ("" if equal).
std::string first_difference(const uint8_t* theirs, const uint8_t* ours, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (theirs[i] != ours[i]) {
      char b[96];
      std::snprintf(b, sizeof b, "byte %zu: DPDK 0x%02x, ours 0x%02x", i, theirs[i], ours[i]);
      return b;
    }
  }
  return "";
}

std::vector<uint32_t> walking_and_all_ones(unsigned width) {
  std::vector<uint32_t> v{0, width == 32 ? 0xFFFFFFFFu : (1u << width) - 1, 0xFFFFFFFFu};
  for (unsigned bit = 0; bit < width; bit++) v.push_back(1u << bit);
  return v;
}

// DPDK's mana_ring_doorbell and ours write the same 8 bytes at the same offset of a page; nothing
// else of the page changes.
void expect_same_doorbell(gdma_queue_types type, uint32_t id, uint32_t tail, uint8_t arm,
                          uint32_t our_offset, uint64_t our_value) {
  Page theirs(hw::kDoorbellPageSize), ours(hw::kDoorbellPageSize);
  ASSERT_EQ(mana_ring_doorbell(theirs.p, type, id, tail, arm), 0);
  mana::ring_doorbell(ours.p, our_offset, our_value);
  EXPECT_EQ(first_difference(theirs.p, ours.p, theirs.size), "")
      << "queue type " << type << std::hex << " id 0x" << id << " tail 0x" << tail << " arm 0x"
      << unsigned{arm} << ": ours 0x" << our_value << " at 0x" << our_offset;
}

TEST(GdmaCrosscheck, SqDoorbell) {
  for (uint32_t id : walking_and_all_ones(24))
    for (uint32_t tail : walking_and_all_ones(32))
      expect_same_doorbell(GDMA_QUEUE_SEND, id, tail, 0, hw::kSqDoorbellOffset,
                           hw::sq_doorbell(id, tail));
}

// DPDK passes its `arm` argument as the RQ doorbell's wqe_cnt (22.11.11 always passes 0).
TEST(GdmaCrosscheck, RqDoorbell) {
  for (uint32_t id : walking_and_all_ones(24))
    for (uint32_t tail : walking_and_all_ones(32))
      for (uint32_t wqe_cnt : walking_and_all_ones(8))
        expect_same_doorbell(GDMA_QUEUE_RECEIVE, id, tail, static_cast<uint8_t>(wqe_cnt),
                             hw::kRqDoorbellOffset, hw::rq_doorbell(id, tail, wqe_cnt & 0xFF));
}

TEST(GdmaCrosscheck, CqDoorbellWithArmBit) {
  for (uint32_t id : walking_and_all_ones(24))
    for (uint32_t tail : walking_and_all_ones(32))
      for (bool arm : {false, true})
        expect_same_doorbell(GDMA_QUEUE_COMPLETION, id, tail, arm, hw::kCqDoorbellOffset,
                             hw::cq_doorbell(id, tail, arm));
}

TEST(GdmaCrosscheck, DoorbellOffsets) {
  EXPECT_EQ(hw::kSqDoorbellOffset, dpdk_doorbell_offset_sq);
  EXPECT_EQ(hw::kRqDoorbellOffset, dpdk_doorbell_offset_rq);
  EXPECT_EQ(hw::kCqDoorbellOffset, dpdk_doorbell_offset_cq);
  EXPECT_EQ(hw::kEqDoorbellOffset, dpdk_doorbell_offset_eq);
}

// One WQE posted by DPDK's gdma_post_work_request and by our post_wqe into two rings that start
// with the same garbage: the rings, the new heads and the WQE sizes must be identical.
void expect_same_wqe(uint32_t oob_size, uint32_t num_sge, uint32_t head_bu) {
  constexpr uint32_t kRingBytes = 4096;
  Page theirs(kRingBytes), ours(kRingBytes);
  std::memset(theirs.p, 0xA5, kRingBytes);
  std::memset(ours.p, 0xA5, kRingBytes);

  uint8_t oob[hw::kLongOobSize];
  for (uint32_t i = 0; i < sizeof oob; i++) oob[i] = static_cast<uint8_t>(0x10 + i);
  std::vector<hw::Sge> sgl;
  for (uint32_t i = 0; i < num_sge; i++)
    sgl.push_back({0x00007F0000001000ull + 0x1111ull * i, 0xBEEF0000u + i, 60 + i});
  std::vector<gdma_sgl_element> their_sgl(num_sge);
  static_assert(sizeof(gdma_sgl_element) == sizeof(hw::Sge));
  if (num_sge) std::memcpy(their_sgl.data(), sgl.data(), num_sge * sizeof(hw::Sge));

  mana_gdma_queue q{theirs.p, kRingBytes / hw::kBasicUnit, kRingBytes, 7, head_bu, head_bu};
  gdma_work_request req{};
  req.sgl = their_sgl.data();
  req.num_sgl_elements = num_sge;
  req.inline_oob_size_in_bytes = oob_size;
  req.inline_oob_data = oob;
  uint32_t their_wqe_bu = 0;
  ASSERT_EQ(gdma_post_work_request(&q, &req, &their_wqe_bu), 0);

  mana::WorkQueue wq{ours.p, kRingBytes - 1, kRingBytes / hw::kBasicUnit, head_bu, head_bu, 7};
  mana::post_wqe(wq, oob, oob_size, sgl.data(), num_sge);

  const std::string what = "OOB " + std::to_string(oob_size) + ", " + std::to_string(num_sge) +
                           " SGEs at BU " + std::to_string(head_bu);
  EXPECT_EQ(first_difference(theirs.p, ours.p, kRingBytes), "") << what;
  EXPECT_EQ(wq.head_bu, q.head) << what;
  EXPECT_EQ(hw::wqe_size_bu(oob_size, num_sge), their_wqe_bu) << what;
}

TEST(GdmaCrosscheck, WqeWriter) {
  const uint32_t last_bu = 4096 / hw::kBasicUnit - 1;
  for (uint32_t oob : {hw::kShortOobSize, hw::kLongOobSize})
    for (uint32_t sges : {0u, 1u, 2u, 3u, 7u, 15u, 29u})
      for (uint32_t head : {0u, 5u, last_bu - 2, last_bu, last_bu + 1 + 3 * 128})
        expect_same_wqe(oob, sges, head);
  for (uint32_t head : {0u, last_bu}) expect_same_wqe(hw::kShortOobSize, hw::kMaxTxSge, head);
}

// The owner-bit protocol: for every consumer index over two full owner cycles and every owner value
// a CQE may hold, DPDK's gdma_poll_completion_queue and our cq_peek agree on empty / valid /
// overflow. DPDK returns 0 for both empty and overflow; its "CQ overflowed" log line tells them
// apart, so the test reads DPDK's log.
class CqPollCrosscheck : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = open_memstream(&log_text_, &log_size_);
    ASSERT_NE(log_, nullptr);
    ASSERT_EQ(rte_openlog_stream(log_), 0);
    mana_logtype_driver = RTE_LOGTYPE_USER1;  // (RTE_LOGTYPE_PMD is gone since DPDK 24.03)
  }
  void TearDown() override {
    rte_openlog_stream(nullptr);
    std::fclose(log_);
    std::free(log_text_);
  }
  size_t overflow_lines() {
    std::fflush(log_);
    size_t n = 0;
    for (const char* s = log_text_; s && (s = std::strstr(s, "CQ overflowed")); s++) n++;
    return n;
  }
  FILE* log_ = nullptr;
  char* log_text_ = nullptr;
  size_t log_size_ = 0;
};

TEST_F(CqPollCrosscheck, OwnerBitProtocol) {
  constexpr uint32_t kCount = 8;
  Page ring(kCount * hw::kCqeSize);
  auto* cqes = reinterpret_cast<gdma_hardware_completion_entry*>(ring.p);
  std::vector<uint32_t> heads;
  for (uint32_t h = kCount; h < kCount + 2 * 8 * kCount + 3; h++) heads.push_back(h);
  for (uint32_t h = 0xFFFFFFFFu - 2 * kCount; h != kCount + 1; h++) heads.push_back(h);

  size_t overflows_seen = 0;
  for (uint32_t head : heads) {
    for (uint32_t owner = 0; owner <= hw::kOwnerMask; owner++) {
      gdma_hardware_completion_entry& e = cqes[head % kCount];
      e.owner_bits = owner;
      mana_gdma_queue q{ring.p, kCount, kCount * hw::kCqeSize, 3, head, 0};
      gdma_comp comp{};
      const uint32_t theirs = gdma_poll_completion_queue(&q, &comp, 1);
      const size_t overflows = overflow_lines();
      const bool their_overflow = overflows > overflows_seen;
      overflows_seen = overflows;

      mana::CompletionQueue cq{reinterpret_cast<hw::Cqe*>(ring.p), kCount - 1,
                               mana::log2_of_pow2(kCount), head, 3};
      const hw::Cqe* ours = nullptr;
      const mana::CqPoll state = mana::cq_peek(cq, &ours);
      const std::string what = "head " + std::to_string(head) + " owner " + std::to_string(owner);
      EXPECT_EQ(state == mana::CqPoll::kValid, theirs == 1) << what;
      EXPECT_EQ(state == mana::CqPoll::kOverflow, their_overflow) << what;
      if (theirs == 1) {
        EXPECT_EQ(reinterpret_cast<const void*>(ours), static_cast<const void*>(comp.cqe_data))
            << what;
        EXPECT_EQ(q.head, head + 1) << what;
      }
    }
  }
  EXPECT_GT(overflows_seen, 0u) << "DPDK's overflow log line was never seen: the check is blind";
}

// Both drivers start a CQ's consumer index at its entry count (DPDK: rx.c and tx.c).
TEST(GdmaCrosscheck, CqInitialHeadIsCount) {
  for (uint32_t count : {8u, 64u, 256u, 4096u}) {
    const uint32_t head = hw::cq_initial_head(count);
    EXPECT_EQ(head, count);
    // With all owner bits zero, DPDK's poll reports an empty CQ at that index.
    Page ring(count * hw::kCqeSize);
    mana_gdma_queue q{ring.p, count, count * static_cast<uint32_t>(hw::kCqeSize), 1, head, 0};
    gdma_comp comp{};
    EXPECT_EQ(gdma_poll_completion_queue(&q, &comp, 1), 0u) << count;
  }
}

}  // namespace
