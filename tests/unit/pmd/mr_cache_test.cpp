// SPDX-License-Identifier: BSD-3-Clause
// The MR cache with fake registrations (doc/hardware.md §2.6, doc/guide.md "Memory registration"):
// per-queue MRU in front of the lock-free port table, whole mempools registered chunk by chunk
// (at setup, on mempool events or on first sight), registration outside any lock, everything
// deregistered at release.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <functional>

#include <gtest/gtest.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dpdk_compat.h"
#include "eal_env.h"
#include "mr_cache.h"

namespace {

using namespace mana;

// Records registrations; lkeys count up from 100.
struct FakeRegistrations {
  struct Mr {
    uintptr_t start;
    size_t len;
    uint32_t lkey;
    bool live;
  };
  std::vector<Mr> mrs;
  int fail_after = -1;  // registrations that succeed before one fails (-1: never)
  std::function<void()> while_registering;  // runs inside reg, without the mutex (a slow syscall)
  mutable std::mutex mutex;                 // registrations may come from several threads

  static int reg(void* ctx, uintptr_t start, size_t len, uint32_t* lkey, void** handle) {
    auto* self = static_cast<FakeRegistrations*>(ctx);
    if (self->while_registering) self->while_registering();
    std::lock_guard<std::mutex> hold(self->mutex);
    if (self->fail_after == 0) return -ENOMEM;
    if (self->fail_after > 0) self->fail_after--;
    self->mrs.push_back({start, len, 100u + static_cast<uint32_t>(self->mrs.size()), true});
    *lkey = self->mrs.back().lkey;
    *handle = reinterpret_cast<void*>(self->mrs.size());  // 1-based index
    return 0;
  }
  static void dereg(void* ctx, void* handle) {
    auto* self = static_cast<FakeRegistrations*>(ctx);
    if (handle == nullptr) return;  // a range a test inserted directly
    std::lock_guard<std::mutex> hold(self->mutex);
    Mr& mr = self->mrs.at(reinterpret_cast<uintptr_t>(handle) - 1);
    EXPECT_TRUE(mr.live) << "deregistered twice";
    mr.live = false;
  }
  MrRegistrar registrar() { return {reg, dereg, this}; }
  size_t live() const {
    std::lock_guard<std::mutex> hold(mutex);
    size_t n = 0;
    for (const Mr& m : mrs) n += m.live;
    return n;
  }
  size_t registered() const {
    std::lock_guard<std::mutex> hold(mutex);
    return mrs.size();
  }
};

// Waits (bounded) until `done` holds; false on timeout.
template <class Pred>
bool wait_until(Pred done, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

class MrCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mr_port_cache_init(port_, SOCKET_ID_ANY), 0);
    mr_queue_cache_reset(queue_);
  }
  void TearDown() override {
    mr_port_cache_release(port_, fake_.registrar());
    for (rte_mempool* mp : pools_) rte_mempool_free(mp);
  }
  rte_mempool* make_pool(const char* name, unsigned n) {
    rte_mempool* mp =
        rte_pktmbuf_pool_create(name, n, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    EXPECT_NE(mp, nullptr) << rte_strerror(rte_errno);
    if (mp) pools_.push_back(mp);
    return mp;
  }
  uint32_t lookup(rte_mbuf* m, rte_mempool* pool) {
    return mr_lookup(queue_, port_, reinterpret_cast<uintptr_t>(m->buf_addr), m->buf_len, pool,
                     fake_.registrar());
  }

  FakeRegistrations fake_;
  MrPortCache port_{};
  MrQueueCache queue_{};
  std::vector<rte_mempool*> pools_;
};

// The range of every chunk, page-rounded as registered.
std::set<std::pair<uintptr_t, uintptr_t>> chunk_ranges(rte_mempool* mp) {
  std::set<std::pair<uintptr_t, uintptr_t>> out;
  rte_mempool_mem_iter(
      mp,
      [](rte_mempool*, void* opaque, rte_mempool_memhdr* h, unsigned) {
        const uintptr_t page = compat::page_size();
        const uintptr_t a = reinterpret_cast<uintptr_t>(h->addr);
        static_cast<std::set<std::pair<uintptr_t, uintptr_t>>*>(opaque)->insert(
            {RTE_ALIGN_FLOOR(a, page), RTE_ALIGN_CEIL(a + h->len, page)});
      },
      &out);
  return out;
}

TEST_F(MrCacheTest, FirstLookupRegistersThePoolThenHitsTheQueueCache) {
  rte_mempool* mp = make_pool("mr_a", 511);
  rte_mbuf* m = rte_pktmbuf_alloc(mp);
  ASSERT_NE(m, nullptr);
  const uint32_t lkey = lookup(m, mp);
  EXPECT_NE(lkey, kInvalidLkey);
  const auto chunks = chunk_ranges(mp);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(fake_.mrs.size(), chunks.size());  // chunk by chunk
  for (const auto& mr : fake_.mrs) {
    EXPECT_EQ(mr.start % compat::page_size(), 0u);
    EXPECT_TRUE(chunks.count({mr.start, mr.start + mr.len})) << std::hex << mr.start;
  }
  // Served from the per-queue cache: no port table, no registration (pool null proves it).
  EXPECT_EQ(mr_queue_lookup(queue_, reinterpret_cast<uintptr_t>(m->buf_addr), m->buf_len), lkey);
  EXPECT_EQ(lookup(m, nullptr), lkey);
  EXPECT_EQ(fake_.mrs.size(), chunks.size());
  rte_pktmbuf_free(m);
}

TEST_F(MrCacheTest, EveryMbufOfSeveralPoolsIsCoveredByItsPoolsMr) {
  rte_mempool* a = make_pool("mr_b1", 255);
  rte_mempool* b = make_pool("mr_b2", 255);
  for (rte_mempool* mp : {a, b}) {
    std::vector<rte_mbuf*> bufs(255);
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(mp, bufs.data(), bufs.size()), 0);
    for (rte_mbuf* m : bufs) {
      const uint32_t lkey = lookup(m, mp);
      ASSERT_NE(lkey, kInvalidLkey);
      const auto& mr = fake_.mrs.at(lkey - 100);
      const uintptr_t addr = reinterpret_cast<uintptr_t>(m->buf_addr);
      EXPECT_TRUE(addr >= mr.start && addr + m->buf_len <= mr.start + mr.len);
    }
    rte_pktmbuf_free_bulk(bufs.data(), bufs.size());
  }
  const size_t registered = fake_.mrs.size();
  EXPECT_EQ(registered, chunk_ranges(a).size() + chunk_ranges(b).size());
  // Registering a known pool again does nothing.
  EXPECT_EQ(mr_register_mempool(port_, a, fake_.registrar()), 0);
  EXPECT_EQ(fake_.mrs.size(), registered);
}

TEST_F(MrCacheTest, MruEvictsRoundRobin) {
  for (uint32_t i = 0; i < kMrQueueCacheSize + 1; i++)
    mr_queue_insert(queue_, MrRange{0x10000u * (i + 1), 0x10000u * (i + 1) + 0x1000, i});
  EXPECT_EQ(mr_queue_lookup(queue_, 0x10000, 16), kInvalidLkey);  // the oldest went
  for (uint32_t i = 1; i < kMrQueueCacheSize + 1; i++)
    EXPECT_EQ(mr_queue_lookup(queue_, 0x10000u * (i + 1) + 8, 16), i);
  EXPECT_EQ(mr_queue_lookup(queue_, 0x20000 + 0x1000 - 8, 16), kInvalidLkey);  // runs past the end
}

TEST_F(MrCacheTest, PortTableStaysSortedAndGrows) {
  // 300 ranges (beyond the initial capacity) inserted out of order are all found.
  constexpr uint32_t kRanges = 300;
  for (uint32_t i = 0; i < kRanges; i++) {
    const uint32_t k = (i * 7919u) % kRanges;  // a permutation
    const uintptr_t start = 0x100000000ull + k * 0x10000ull;
    ASSERT_EQ(mr_port_insert(port_, MrEntry{{start, start + 0x8000, 1000 + k}, nullptr, nullptr}),
              0);
  }
  ASSERT_EQ(mr_port_count(port_), kRanges);
  for (uint32_t i = 1; i < port_.table->count; i++)
    ASSERT_LT(port_.table->entries[i - 1].range.start, port_.table->entries[i].range.start);
  // Nobody was reading: every replaced table was freed by the next swap.
  EXPECT_EQ(port_.retired, nullptr);
  for (uint32_t k = 0; k < kRanges; k++) {
    MrRange r;
    const uintptr_t start = 0x100000000ull + k * 0x10000ull;
    ASSERT_TRUE(mr_port_lookup(port_, start + 0x7FF0, 16, &r)) << k;
    EXPECT_EQ(r.lkey, 1000 + k);
    EXPECT_FALSE(mr_port_lookup(port_, start + 0x8000, 16, &r)) << k;  // the gap after it
  }
}

TEST_F(MrCacheTest, OverlappingRangesAreSearchedBackwards) {
  // A nested range starts after the outer one: an address past its end belongs to the outer one.
  ASSERT_EQ(mr_port_insert(port_, MrEntry{{0x10000, 0x30000, 1}, nullptr, nullptr}), 0);
  ASSERT_EQ(mr_port_insert(port_, MrEntry{{0x20000, 0x28000, 2}, nullptr, nullptr}), 0);
  MrRange r;
  ASSERT_TRUE(mr_port_lookup(port_, 0x29000, 64, &r));
  EXPECT_EQ(r.lkey, 1u);
  ASSERT_TRUE(mr_port_lookup(port_, 0x21000, 64, &r));
  EXPECT_EQ(r.lkey, 2u);
  EXPECT_FALSE(mr_port_lookup(port_, 0x2FFF0, 64, &r));
}

TEST_F(MrCacheTest, ReleaseDeregistersEverything) {
  rte_mempool* mp = make_pool("mr_c", 127);
  ASSERT_EQ(mr_register_mempool(port_, mp, fake_.registrar()), 0);
  ASSERT_GT(fake_.live(), 0u);
  mr_port_cache_release(port_, fake_.registrar());
  EXPECT_EQ(fake_.live(), 0u);
  EXPECT_EQ(port_.table, nullptr);
}

TEST_F(MrCacheTest, FailedRegistrationIsReportedAndRetried) {
  rte_mempool* mp = make_pool("mr_d", 127);
  rte_mbuf* m = rte_pktmbuf_alloc(mp);
  ASSERT_NE(m, nullptr);
  fake_.fail_after = 0;
  EXPECT_EQ(lookup(m, mp), kInvalidLkey);
  fake_.fail_after = -1;
  EXPECT_NE(lookup(m, mp), kInvalidLkey);  // the pool was not marked known: retried
  rte_pktmbuf_free(m);
}

TEST_F(MrCacheTest, AddressOutsideAnyPoolIsNotFound) {
  rte_mempool* mp = make_pool("mr_e", 127);
  ASSERT_EQ(mr_register_mempool(port_, mp, fake_.registrar()), 0);
  static uint8_t elsewhere[64];
  EXPECT_EQ(mr_lookup(queue_, port_, reinterpret_cast<uintptr_t>(elsewhere), sizeof(elsewhere), mp,
                      fake_.registrar()),
            kInvalidLkey);
}

// The issue this design fixes: a registration (a syscall, or a request to the primary that may
// take seconds) held the port lock that every queue's miss takes. Here the registration of pool B
// waits until another thread has done 1000 port-table lookups of pool A: with a lock held across
// the registration, the lookups could never finish and the wait would time out.
TEST_F(MrCacheTest, LookupsRunWhileAnotherPoolIsRegistering) {
  rte_mempool* a = make_pool("mr_f1", 127);
  rte_mempool* b = make_pool("mr_f2", 127);
  ASSERT_EQ(mr_register_mempool(port_, a, fake_.registrar()), 0);
  rte_mbuf* m = rte_pktmbuf_alloc(a);
  ASSERT_NE(m, nullptr);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(m->buf_addr);
  MrRange expected;
  ASSERT_TRUE(mr_port_lookup(port_, addr, m->buf_len, &expected));

  std::atomic<unsigned> lookups{0};
  std::atomic<bool> registering{false}, wrong{false};
  bool lookups_done_in_time = false;
  fake_.while_registering = [&] {
    registering = true;
    lookups_done_in_time = wait_until([&] { return lookups.load() >= 1000; });
  };
  std::thread reader([&] {
    ASSERT_TRUE(wait_until([&] { return registering.load(); })) << "no registration started";
    for (unsigned i = 0; i < 1000; i++) {
      MrRange r;
      if (!mr_port_lookup(port_, addr, m->buf_len, &r) || r.lkey != expected.lkey) wrong = true;
      lookups++;
    }
  });
  EXPECT_EQ(mr_register_mempool(port_, b, fake_.registrar()), 0);
  reader.join();
  fake_.while_registering = nullptr;
  EXPECT_TRUE(lookups_done_in_time) << "lookups were blocked by the registration";
  EXPECT_FALSE(wrong);
  rte_pktmbuf_free(m);
}

// Two threads register the same pool at once (both inside the registration before either
// publishes): one set of MRs ends in the table, the other is deregistered, nothing leaks.
TEST_F(MrCacheTest, ConcurrentRegistrationsOfOnePoolKeepOneSetOfMrs) {
  rte_mempool* mp = make_pool("mr_g", 255);
  const size_t chunks = chunk_ranges(mp).size();
  std::atomic<unsigned> inside{0};
  std::atomic<bool> overlapped{true};
  fake_.while_registering = [&] {
    inside++;
    if (!wait_until([&] { return inside.load() >= 2; }, std::chrono::seconds(10)))
      overlapped = false;
  };
  int rc[2] = {-1, -1};
  std::thread t0([&] { rc[0] = mr_register_mempool(port_, mp, fake_.registrar()); });
  std::thread t1([&] { rc[1] = mr_register_mempool(port_, mp, fake_.registrar()); });
  t0.join();
  t1.join();
  fake_.while_registering = nullptr;
  EXPECT_TRUE(overlapped) << "the second registration waited for the first one";
  EXPECT_EQ(rc[0], 0);
  EXPECT_EQ(rc[1], 0);
  EXPECT_EQ(fake_.registered(), 2 * chunks);
  EXPECT_EQ(fake_.live(), chunks);
  EXPECT_EQ(mr_port_count(port_), chunks);
}

// Readers on several threads keep finding every range while a writer replaces the table 2000
// times; once they stop, the replaced tables go. (The reclamation rule itself is checked
// deterministically below: a race on a freed table is too rare to rely on here.)
TEST_F(MrCacheTest, LookupsFromThreadsWhileInsertingSeeConsistentTables) {
  constexpr uint32_t kFixed = 16, kInserted = 2000;
  auto start_of = [](uint32_t k) { return uintptr_t{0x200000000ull} + k * 0x10000ull; };
  for (uint32_t k = 0; k < kFixed; k++)
    ASSERT_EQ(
        mr_port_insert(port_, MrEntry{{start_of(k), start_of(k) + 0x8000, k}, nullptr, nullptr}),
        0);
  std::atomic<bool> stop{false}, wrong{false};
  std::atomic<uint64_t> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; t++)
    readers.emplace_back([&, t] {
      for (uint32_t i = t; !stop.load(); i++) {
        const uint32_t k = i % kFixed;
        MrRange r;
        if (!mr_port_lookup(port_, start_of(k) + 0x100, 64, &r) || r.lkey != k) wrong = true;
        reads++;
      }
    });
  for (uint32_t k = kFixed; k < kFixed + kInserted; k++) {
    const uintptr_t s0 = start_of(k % 2 ? k : kFixed + kInserted * 2 - k);  // both ends
    ASSERT_EQ(mr_port_insert(port_, MrEntry{{s0, s0 + 0x8000, k}, nullptr, nullptr}), 0);
    MrRange r;
    ASSERT_TRUE(mr_port_lookup(port_, s0 + 8, 8, &r));
    EXPECT_EQ(r.lkey, k);
  }
  ASSERT_TRUE(wait_until([&] { return reads.load() > 1000; })) << "readers made no progress";
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_FALSE(wrong);
  EXPECT_EQ(mr_port_count(port_), kFixed + kInserted);
  EXPECT_EQ(port_.readers, 0u);
  ASSERT_EQ(mr_port_insert(port_, MrEntry{{0x10000, 0x20000, 7}, nullptr, nullptr}), 0);
  EXPECT_EQ(port_.retired, nullptr) << "replaced tables kept with no reader";
}

// A lookup in flight (in any process) keeps every replaced table alive and intact; the first swap
// after it ends frees them.
TEST_F(MrCacheTest, ReplacedTablesLiveWhileALookupIsInFlight) {
  ASSERT_EQ(mr_port_insert(port_, MrEntry{{0x10000, 0x20000, 1}, nullptr, nullptr}), 0);
  const MrTable* held = port_.table;
  __atomic_fetch_add(&port_.readers, 1, __ATOMIC_SEQ_CST);  // a reader that loaded `held`
  for (uint32_t k = 2; k < 5; k++)
    ASSERT_EQ(
        mr_port_insert(
            port_, MrEntry{{0x10000u * k + 0x20000, 0x10000u * k + 0x28000, k}, nullptr, nullptr}),
        0);
  EXPECT_NE(port_.retired, nullptr) << "replaced tables freed under a reader";
  EXPECT_EQ(held->count, 1u);
  EXPECT_EQ(held->entries[0].range.lkey, 1u);
  __atomic_fetch_sub(&port_.readers, 1, __ATOMIC_SEQ_CST);
  ASSERT_EQ(mr_port_insert(port_, MrEntry{{0x100000, 0x110000, 9}, nullptr, nullptr}), 0);
  EXPECT_EQ(port_.retired, nullptr);
  EXPECT_EQ(mr_port_count(port_), 5u);
}

// Queue setup registers every populated pool (TX queues cannot know theirs).
TEST_F(MrCacheTest, RegisterAllMempoolsCoversEveryPool) {
  rte_mempool* a = make_pool("mr_h1", 127);
  rte_mempool* b = make_pool("mr_h2", 127);
  ASSERT_EQ(mr_register_all_mempools(port_, fake_.registrar()), 0);
  const size_t registered = fake_.registered();
  EXPECT_EQ(registered, chunk_ranges(a).size() + chunk_ranges(b).size());
  for (rte_mempool* mp : {a, b}) {
    rte_mbuf* m = rte_pktmbuf_alloc(mp);
    ASSERT_NE(m, nullptr);
    EXPECT_NE(lookup(m, nullptr), kInvalidLkey) << mp->name;  // no registration on lookup
    rte_pktmbuf_free(m);
  }
  ASSERT_EQ(mr_register_all_mempools(port_, fake_.registrar()), 0);
  EXPECT_EQ(fake_.registered(), registered);  // known pools are not registered again
}

// Pools created while the port runs are registered by their READY event, before any lookup;
// a destroyed pool's MRs leave the table and are deregistered, and queue caches forget them.
TEST_F(MrCacheTest, MempoolEventsRegisterNewPoolsAndDeregisterDestroyedOnes) {
  MrEventSubscription sub{&port_, fake_.registrar()};
  ASSERT_EQ(mr_events_subscribe(&sub), 0);
  rte_mempool* mp =
      rte_pktmbuf_pool_create("mr_i", 127, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  ASSERT_NE(mp, nullptr);
  const size_t chunks = chunk_ranges(mp).size();
  EXPECT_EQ(fake_.live(), chunks);
  EXPECT_EQ(mr_port_count(port_), chunks);
  rte_mbuf* m = rte_pktmbuf_alloc(mp);
  ASSERT_NE(m, nullptr);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(m->buf_addr);
  const uint32_t len = m->buf_len;
  EXPECT_NE(lookup(m, nullptr), kInvalidLkey);  // found without registering on the data path
  rte_pktmbuf_free(m);
  rte_mempool_free(mp);
  EXPECT_EQ(fake_.live(), 0u);
  EXPECT_EQ(mr_port_count(port_), 0u);
  // The queue cache held the range: the next burst's sync (generation change) makes it miss.
  EXPECT_NE(mr_queue_lookup(queue_, addr, len), kInvalidLkey);
  mr_queue_cache_sync(queue_, port_);
  EXPECT_EQ(mr_lookup(queue_, port_, addr, len, nullptr, fake_.registrar()), kInvalidLkey);
  mr_events_unsubscribe(&sub);
  rte_mempool* after = make_pool("mr_i2", 127);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(mr_port_count(port_), 0u);  // unsubscribed: no more registrations
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
