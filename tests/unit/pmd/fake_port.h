// A port without a device for data-path tests: queue rings in plain memory, a fake doorbell page,
// a fake MR registrar and a real mempool. The tests play the NIC: they read the WQEs the burst
// functions write and write CQEs by the owner-bit protocol of spec §4.5.
#pragma once

#include <cstdlib>
#include <cstring>

#include <ethdev_driver.h>
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include "mana/gdma_format.h"
#include "priv.h"

namespace mana_test {

inline constexpr uint16_t kFakePortId = 0;  // no real ports exist in the test process
inline constexpr uint32_t kFakeLkey = 0x4242;

inline int fake_reg(void*, uintptr_t, size_t, uint32_t* lkey, void** handle) {
  *lkey = kFakeLkey;
  *handle = nullptr;
  return 0;
}
inline void fake_dereg(void*, void*) {}

struct AlignedMemory {
  explicit AlignedMemory(size_t n)
      : p(static_cast<uint8_t*>(std::aligned_alloc(4096, n))), size(n) {
    std::memset(p, 0, n);
  }
  ~AlignedMemory() { std::free(p); }
  uint8_t* p;
  size_t size;
};

// Writes CQEs into a CQ ring as the NIC does.
class FakeCq {
 public:
  FakeCq(uint32_t count) : count_(count), mem_(count * sizeof(mana::hw::Cqe)) {}
  mana::hw::Cqe* ring() { return reinterpret_cast<mana::hw::Cqe*>(mem_.p); }
  mana::CompletionQueue consumer(uint32_t id) {
    return mana::CompletionQueue{ring(), count_ - 1, mana::log2_of_pow2(count_),
                                 mana::hw::cq_initial_head(count_), id};
  }
  // `fill` sets the client data; the owner bits are written last.
  template <class Fill>
  void produce(Fill fill) {
    mana::hw::Cqe e{};
    fill(e);
    mana::hw::Cqe& slot = ring()[next_ % count_];
    std::memcpy(&slot, &e, 60);
    slot.dw[15] = mana::hw::Cqe::Owner::set(e.dw[15], mana::hw::cq_producer_owner(next_, count_));
    next_++;
  }

 private:
  uint32_t count_;
  AlignedMemory mem_;
  uint64_t next_ = 0;
};

class FakePort : public ::testing::Test {
 protected:
  void SetUp() override {
    priv_ = mana::PortPriv{};
    ASSERT_EQ(mana::mr_port_cache_init(priv_.mr, SOCKET_ID_ANY), 0);
    pp_.db_page = db_page_.p;
    pp_.registrar = mana::MrRegistrar{fake_reg, fake_dereg, nullptr};
    rte_eth_devices[kFakePortId].process_private = &pp_;
    char name[32];
    snprintf(name, sizeof(name), "fake_pool_%u", pool_serial_++);
    pool_ =
        rte_pktmbuf_pool_create(name, kPoolSize, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    ASSERT_NE(pool_, nullptr);
  }
  void TearDown() override {
    rte_eth_devices[kFakePortId].process_private = nullptr;
    mana::mr_port_cache_release(priv_.mr, pp_.registrar);
    rte_mempool_free(pool_);
  }
  uint64_t doorbell(uint32_t offset) const {
    uint64_t v;
    std::memcpy(&v, db_page_.p + offset, sizeof(v));
    return v;
  }
  unsigned in_use() const { return rte_mempool_in_use_count(pool_); }

  static constexpr unsigned kPoolSize = 1023;
  static inline unsigned pool_serial_ = 0;
  mana::PortPriv priv_{};
  mana::ProcessPrivate pp_{};
  AlignedMemory db_page_{4096};
  rte_mempool* pool_ = nullptr;
};

}  // namespace mana_test
