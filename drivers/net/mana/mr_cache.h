// Memory-registration cache (doc/hardware.md §2.6): which lkey covers an address.
//
// Two levels: a per-queue MRU of a few ranges (no lock, the queue's own thread only) in front of a
// per-port table sorted by start address (DPDK memory, binary search, spinlock: it is only reached
// on an MRU miss). A mempool seen for the first time is registered chunk by chunk into the port
// table; everything is deregistered at close. Registration goes through an MrRegistrar so that the
// cache logic is tested with fake registrations.
#pragma once

#include <cstddef>
#include <cstdint>

#include <rte_spinlock.h>

struct ibv_pd;
struct rte_mempool;

namespace mana {

inline constexpr uint32_t kInvalidLkey = UINT32_MAX;

struct MrRange {
  uintptr_t start = 0;
  uintptr_t end = 0;  // exclusive
  uint32_t lkey = kInvalidLkey;

  bool covers(uintptr_t addr, size_t len) const { return addr >= start && addr + len <= end; }
};

// How ranges are registered: ibv_reg_mr/ibv_dereg_mr in the driver, fakes in tests.
struct MrRegistrar {
  // Returns 0 with the lkey and an opaque handle for dereg, or a negative errno.
  int (*reg)(void* ctx, uintptr_t start, size_t len, uint32_t* lkey, void** handle);
  void (*dereg)(void* ctx, void* handle);
  void* ctx;
};

MrRegistrar verbs_registrar(ibv_pd* pd);

struct MrEntry {
  MrRange range;
  void* handle;
};

// Per port, in dev_private (shared memory: no process-local pointers other than the MR handles,
// which only the primary uses).
struct MrPortCache {
  rte_spinlock_t lock;
  MrEntry* entries;  // sorted by range.start
  uint32_t count;
  uint32_t capacity;
  const rte_mempool** pools;  // pools whose memory is registered
  uint32_t pool_count;
  uint32_t pool_capacity;
  int socket;
};

// Per queue: a tiny most-recently-used cache, looked up before the port table.
inline constexpr unsigned kMrQueueCacheSize = 4;
static_assert((kMrQueueCacheSize & (kMrQueueCacheSize - 1)) == 0);
struct MrQueueCache {
  MrRange recent[kMrQueueCacheSize];
  uint32_t next;  // round-robin victim
};

int mr_port_cache_init(MrPortCache& c, int socket);
// Deregisters every MR and frees the table.
void mr_port_cache_release(MrPortCache& c, const MrRegistrar& r);
// Deregisters every MR and forgets every pool, keeping the table: the PD is gone with a removed VF,
// and the pools are registered again in the new one (recovery.cpp).
void mr_port_cache_drop_all(MrPortCache& c, const MrRegistrar& r);
// Registers every memory chunk of `mp` (page-rounded) unless done before. 0 or negative errno.
int mr_register_mempool(MrPortCache& c, rte_mempool* mp, const MrRegistrar& r);
// Adds one registered range to the port table (takes the lock). 0 or -ENOMEM.
int mr_port_insert(MrPortCache& c, const MrEntry& e);
// Port-table lookup (takes the lock). True with the covering range.
bool mr_port_lookup(MrPortCache& c, uintptr_t addr, uint32_t len, MrRange* out);

void mr_queue_cache_reset(MrQueueCache& q);
inline uint32_t mr_queue_lookup(const MrQueueCache& q, uintptr_t addr, uint32_t len) {
  for (const MrRange& r : q.recent)
    if (r.covers(addr, len)) return r.lkey;
  return kInvalidLkey;
}
void mr_queue_insert(MrQueueCache& q, const MrRange& r);

// The miss path: port table, then registration of `pool` (may be null: nothing to register), then
// the table again. Returns the lkey or kInvalidLkey.
uint32_t mr_lookup_slow(MrQueueCache& q, MrPortCache& c, uintptr_t addr, uint32_t len,
                        rte_mempool* pool, const MrRegistrar& r);

inline uint32_t mr_lookup(MrQueueCache& q, MrPortCache& c, uintptr_t addr, uint32_t len,
                          rte_mempool* pool, const MrRegistrar& r) {
  const uint32_t lkey = mr_queue_lookup(q, addr, len);
  if (__builtin_expect(lkey != kInvalidLkey, 1)) return lkey;
  return mr_lookup_slow(q, c, addr, len, pool, r);
}

}  // namespace mana
