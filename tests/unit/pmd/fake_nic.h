// SPDX-License-Identifier: BSD-3-Clause
// The NIC side of a port without a device: queue rings in plain memory, CQEs written by the
// owner-bit protocol of doc/hardware.md §4.5, a fake doorbell page and a fake MR registrar. Used by
// the data-path unit tests (fake_port.h) and by the instruction-count benchmark (app/bench).
#pragma once

#include <cstdlib>
#include <cstring>

#include <ethdev_driver.h>
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
    return mana::make_completion_queue(ring(), count_, id);
  }
  // `fill` sets the client data; the owner bits are written last.
  template <class Fill>
  void produce(Fill fill) {
    mana::hw::Cqe e{};
    fill(e);
    produce(e);
  }
  void produce(const mana::hw::Cqe& e) {
    write_next(e, mana::hw::cq_producer_owner(next_, count_));
    next_++;
  }
  // Writes `e` into the next slot with `owner` in place of the producer's owner bits, without
  // producing it: the consumer sees an empty (stale) or an overflowed entry there.
  void write_next(const mana::hw::Cqe& e, uint32_t owner) {
    mana::hw::Cqe& slot = ring()[next_ % count_];
    std::memcpy(&slot, &e, 60);
    slot.dw[15] = mana::hw::Cqe::Owner::set(e.dw[15], owner);
  }
  uint32_t next_owner() const { return mana::hw::cq_producer_owner(next_, count_); }
  uint64_t produced() const { return next_; }
  uint32_t count() const { return count_; }

 private:
  uint32_t count_;
  AlignedMemory mem_;
  uint64_t next_ = 0;
};

// The port-wide state the burst functions reach: MR cache, doorbell page, process-private data.
struct FakePortState {
  // Returns false when DPDK memory for the MR cache or the mempool cannot be had.
  bool init(const char* pool_name, unsigned pool_size) {
    priv = mana::PortPriv{};
    if (mana::mr_port_cache_init(priv.mr, SOCKET_ID_ANY) != 0) return false;
    pp.db_page = db_page.p;
    pp.bursts_open = 1;
    pp.registrar = mana::MrRegistrar{fake_reg, fake_dereg, nullptr};
    rte_eth_devices[kFakePortId].process_private = &pp;
    data.mtu = RTE_ETHER_MTU;  // tx_prepare reads the port's MTU
    rte_eth_devices[kFakePortId].data = &data;
    pool = rte_pktmbuf_pool_create(pool_name, pool_size, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                   SOCKET_ID_ANY);
    return pool != nullptr;
  }
  void release() {
    rte_eth_devices[kFakePortId].process_private = nullptr;
    rte_eth_devices[kFakePortId].data = nullptr;
    mana::mr_port_cache_release(priv.mr, pp.registrar);
    rte_mempool_free(pool);
    pool = nullptr;
  }

  mana::PortPriv priv{};
  mana::ProcessPrivate pp{};
  rte_eth_dev_data data{};
  AlignedMemory db_page{4096};
  rte_mempool* pool = nullptr;
};

}  // namespace mana_test
