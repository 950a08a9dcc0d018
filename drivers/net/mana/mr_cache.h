// SPDX-License-Identifier: BSD-3-Clause
// Memory-registration cache (doc/hardware.md §2.6, doc/guide.md "Memory registration"): which lkey
// covers an address.
//
// Two levels: a per-queue MRU of a few ranges (no lock, the queue's own thread only) in front of a
// per-port table sorted by start address, in DPDK memory so that secondaries read it too. The port
// table is immutable once published: lookups load its pointer and binary-search it without a lock;
// a change builds a new table and swaps the pointer under a lock held for the swap only. Expensive
// work (ibv_reg_mr, or the request to the primary in a secondary) always happens before, outside
// any lock, so one queue's miss never stalls another queue or process.
//
// Mempools are registered on the control path: at queue setup (every existing pool) and when DPDK
// reports a pool ready (mempool event callback, in the process that creates it); a destroyed pool
// is deregistered. The data path registers only pools it has never seen (a pool populated before
// the port existed in a process that never set up a queue), outside the lock like everything else.
// Registration goes through an MrRegistrar so that the cache logic is tested with fakes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <rte_common.h>
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

// How ranges are registered: ibv_reg_mr/ibv_dereg_mr in the primary, requests to the primary in a
// secondary, fakes in tests. Both may block (syscall, IPC): never called with a lock held.
struct MrRegistrar {
  // Returns 0 with the lkey and an opaque handle for dereg, or a negative errno.
  int (*reg)(void* ctx, uintptr_t start, size_t len, uint32_t* lkey, void** handle);
  void (*dereg)(void* ctx, void* handle);
  void* ctx;
};

MrRegistrar verbs_registrar(ibv_pd* pd);

struct MrEntry {
  MrRange range;
  void* handle;              // the primary's MR (secondaries never dereference it)
  const rte_mempool* owner;  // the pool the range was registered for (null: inserted directly)
};

// An immutable snapshot of the port table, sorted by range.start.
struct MrTable {
  MrTable* retired_next;  // link in the port's list of replaced tables
  uint32_t count;
  MrEntry entries[];
};

// Per port, in dev_private (shared memory: no process-local pointers other than the MR handles,
// which only the primary uses, and the pool pointers, which are shared memory too).
struct MrPortCache {
  // Read by every lookup: kept apart from the words that misses and writers change.
  // `table`: the current snapshot (atomic pointer), set from init to release.
  alignas(RTE_CACHE_LINE_SIZE) MrTable* table;
  // Bumped when ranges are removed: queue caches holding one must forget it.
  uint32_t generation;
  // Lookups in flight in any process: replaced tables are freed only when it is 0 after the swap.
  alignas(RTE_CACHE_LINE_SIZE) uint32_t readers;
  // Serialises swaps; held for no syscall, IPC or allocation.
  alignas(RTE_CACHE_LINE_SIZE) rte_spinlock_t lock;
  MrTable* retired;  // replaced tables a reader may still hold (freed when readers is 0)
  int socket;
};

// Per queue: a tiny most-recently-used cache, looked up before the port table.
inline constexpr unsigned kMrQueueCacheSize = 4;
static_assert((kMrQueueCacheSize & (kMrQueueCacheSize - 1)) == 0);
struct MrQueueCache {
  MrRange recent[kMrQueueCacheSize];
  uint32_t next;        // round-robin victim
  uint32_t generation;  // the port's generation when `recent` was last valid
};

int mr_port_cache_init(MrPortCache& c, int socket);
// Deregisters every MR and frees the tables. No lookup may run (the port is closing).
void mr_port_cache_release(MrPortCache& c, const MrRegistrar& r);
// Deregisters every MR and forgets every pool, keeping an empty table (queue caches forget their
// ranges): the PD is gone with a removed VF, and the pools are registered again in the new one
// (recovery.cpp).
void mr_port_cache_drop_all(MrPortCache& c, const MrRegistrar& r);
// Registers every memory chunk of `mp` (page-rounded) unless the table has it. 0 or negative
// errno; on failure nothing of the pool stays registered. Safe to race with lookups and with
// itself (the loser of a race for the same pool deregisters its own MRs).
int mr_register_mempool(MrPortCache& c, rte_mempool* mp, const MrRegistrar& r);
// Registers every mempool that exists now. Returns the first error, after trying all.
int mr_register_all_mempools(MrPortCache& c, const MrRegistrar& r);
// Removes the ranges of `mp` and deregisters them (the pool is being destroyed).
void mr_deregister_mempool(MrPortCache& c, const rte_mempool* mp, const MrRegistrar& r);
// Adds one registered range to the port table. 0 or -ENOMEM.
int mr_port_insert(MrPortCache& c, const MrEntry& e);
// Lock-free port-table lookup. True with the covering range.
bool mr_port_lookup(MrPortCache& c, uintptr_t addr, uint32_t len, MrRange* out);
// Entries in the current table (for tests and logs).
uint32_t mr_port_count(MrPortCache& c);

// Keeps a port's table in step with the mempools this process creates and destroys (DPDK calls
// mempool event callbacks in the acting process only, so every process that uses the port
// subscribes). `sub` is process-local and must outlive the subscription.
struct MrEventSubscription {
  MrPortCache* cache;
  MrRegistrar registrar;
};
int mr_events_subscribe(MrEventSubscription* sub);
void mr_events_unsubscribe(MrEventSubscription* sub);

void mr_queue_cache_reset(MrQueueCache& q);
inline uint32_t mr_queue_lookup(const MrQueueCache& q, uintptr_t addr, uint32_t len) {
  for (const MrRange& r : q.recent)
    if (r.covers(addr, len)) return r.lkey;
  return kInvalidLkey;
}
void mr_queue_insert(MrQueueCache& q, const MrRange& r);
// The range inserted last (an empty one, covering nothing, in a reset cache): where the next
// segment most likely is.
inline const MrRange& mr_queue_newest(const MrQueueCache& q) {
  return q.recent[(q.next - 1) & (kMrQueueCacheSize - 1)];
}

// The miss path: port table, then registration of `pool` (may be null: nothing to register), then
// the table again. Returns the lkey or kInvalidLkey.
uint32_t mr_lookup_slow(MrQueueCache& q, MrPortCache& c, uintptr_t addr, uint32_t len,
                        rte_mempool* pool, const MrRegistrar& r);

// Once per burst (not per segment: a destroyed pool's mbufs cannot be in a burst that started
// before it was destroyed): forget the cached ranges if the port removed some since.
inline void mr_queue_cache_sync(MrQueueCache& q, const MrPortCache& c) {
  const uint32_t generation = __atomic_load_n(&c.generation, __ATOMIC_ACQUIRE);
  if (__builtin_expect(q.generation != generation, 0)) {
    mr_queue_cache_reset(q);
    q.generation = generation;
  }
}

inline uint32_t mr_lookup(MrQueueCache& q, MrPortCache& c, uintptr_t addr, uint32_t len,
                          rte_mempool* pool, const MrRegistrar& r) {
  const uint32_t lkey = mr_queue_lookup(q, addr, len);
  if (__builtin_expect(lkey != kInvalidLkey, 1)) return lkey;
  return mr_lookup_slow(q, c, addr, len, pool, r);
}

}  // namespace mana
