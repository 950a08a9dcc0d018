// SPDX-License-Identifier: BSD-3-Clause
#include "mr_cache.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <infiniband/verbs.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "dpdk_compat.h"
#include "mana_log.h"

namespace mana {
namespace {

int verbs_reg(void* ctx, uintptr_t start, size_t len, uint32_t* lkey, void** handle) {
  ibv_mr* mr =
      ibv_reg_mr(static_cast<ibv_pd*>(ctx), reinterpret_cast<void*>(start), len,
                 static_cast<int>(IBV_ACCESS_LOCAL_WRITE));  // ibv_reg_mr (a macro) masks it with
                                                             // another enum: C++20 deprecates that
  if (mr == nullptr) return -(errno ? errno : ENOMEM);
  *lkey = mr->lkey;
  *handle = mr;
  return 0;
}

void verbs_dereg(void* /*ctx*/, void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); }

// A lookup in flight: replaced tables stay allocated while any process counts one. Sequentially
// consistent with the writer's pointer swap and its check of `readers`, so that a writer that sees
// no reader after the swap knows nobody still holds a replaced table.
class ReadGuard {
 public:
  explicit ReadGuard(MrPortCache& c) : c_(c) {
    __atomic_fetch_add(&c_.readers, 1, __ATOMIC_SEQ_CST);
    table_ = __atomic_load_n(&c_.table, __ATOMIC_SEQ_CST);
  }
  ~ReadGuard() { __atomic_fetch_sub(&c_.readers, 1, __ATOMIC_RELEASE); }
  ReadGuard(const ReadGuard&) = delete;
  ReadGuard& operator=(const ReadGuard&) = delete;
  const MrTable& table() const { return *table_; }
  MrTable* pointer() const { return table_; }

 private:
  MrPortCache& c_;
  MrTable* table_;
};

MrTable* table_alloc(uint32_t count, int socket) {
  auto* t = static_cast<MrTable*>(rte_malloc_socket(
      "mana_mr", sizeof(MrTable) + count * sizeof(MrEntry), RTE_CACHE_LINE_SIZE, socket));
  if (t != nullptr) {
    t->retired_next = nullptr;
    t->count = count;
  }
  return t;
}

void free_chain(MrTable* t) {
  while (t != nullptr) {
    MrTable* next = t->retired_next;
    rte_free(t);
    t = next;
  }
}

// Index of the first entry whose start is greater than `addr`.
uint32_t upper_bound(const MrTable& t, uintptr_t addr) {
  uint32_t lo = 0, hi = t.count;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (t.entries[mid].range.start <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Ranges are page-rounded and pools register independently, so entries may overlap: look back from
// the last entry that starts at or before `addr` until one covers it.
const MrEntry* find(const MrTable& t, uintptr_t addr, size_t len) {
  for (uint32_t i = upper_bound(t, addr); i > 0; i--)
    if (t.entries[i - 1].range.covers(addr, len)) return &t.entries[i - 1];
  return nullptr;
}

bool has_owner(const MrTable& t, const rte_mempool* mp) {
  for (uint32_t i = 0; i < t.count; i++)
    if (t.entries[i].owner == mp) return true;
  return false;
}

// One change of the table: entries to add (sorted by start) and a pool whose entries go.
struct Change {
  const MrEntry* add = nullptr;
  uint32_t add_count = 0;
  const rte_mempool* remove = nullptr;
  // Set by publish: the entries of `remove` that were taken out (to deregister).
  std::vector<MrEntry> removed;
};

enum class Published { kDone, kAlreadyThere, kNoMemory };

// Builds the next table from `cur` into freshly allocated memory (no lock held).
MrTable* build(const MrTable& cur, Change& ch, int socket) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < cur.count; i++)
    kept += ch.remove == nullptr || cur.entries[i].owner != ch.remove;
  MrTable* next = table_alloc(kept + ch.add_count, socket);
  if (next == nullptr) return nullptr;
  ch.removed.clear();
  uint32_t i = 0, j = 0, n = 0;
  while (i < cur.count || j < ch.add_count) {
    const bool take_add =
        i == cur.count || (j < ch.add_count && ch.add[j].range.start < cur.entries[i].range.start);
    if (take_add) {
      next->entries[n++] = ch.add[j++];
      continue;
    }
    const MrEntry& e = cur.entries[i++];
    if (ch.remove != nullptr && e.owner == ch.remove)
      ch.removed.push_back(e);
    else
      next->entries[n++] = e;
  }
  return next;
}

// Applies `ch` to the current table: build the new one outside the lock, then swap the pointer
// under the lock if nobody swapped it meanwhile (else build again from the newer table). Replaced
// tables are freed once no lookup can hold them. Adding entries of a pool the table already has
// loses (kAlreadyThere): the caller deregisters its duplicates.
Published publish(MrPortCache& c, Change& ch) {
  for (;;) {
    MrTable* reclaim = nullptr;
    {
      ReadGuard g(c);  // the table being copied must not be freed under us
      const MrTable& cur = g.table();
      if (ch.add_count != 0 && ch.add[0].owner != nullptr && has_owner(cur, ch.add[0].owner))
        return Published::kAlreadyThere;
      MrTable* next = build(cur, ch, c.socket);
      if (next == nullptr) return Published::kNoMemory;
      rte_spinlock_lock(&c.lock);
      const bool current = c.table == g.pointer();
      if (current) {
        __atomic_store_n(&c.table, next, __ATOMIC_SEQ_CST);
        g.pointer()->retired_next = c.retired;
        c.retired = g.pointer();
        if (!ch.removed.empty()) __atomic_fetch_add(&c.generation, 1, __ATOMIC_RELEASE);
        // Only this writer's own guard may count: no other lookup holds a replaced table.
        if (__atomic_load_n(&c.readers, __ATOMIC_SEQ_CST) == 1) {
          reclaim = c.retired;
          c.retired = nullptr;
        }
      }
      rte_spinlock_unlock(&c.lock);
      if (!current) {
        rte_free(next);
        continue;
      }
    }
    free_chain(reclaim);
    return Published::kDone;
  }
}

// The page-rounded ranges of a pool's memory chunks, sorted, overlapping ones (chunks sharing a
// page) merged so that no page is registered twice for one pool.
std::vector<MrRange> pool_ranges(rte_mempool* mp) {
  std::vector<MrRange> out;
  rte_mempool_mem_iter(
      mp,
      [](rte_mempool*, void* opaque, rte_mempool_memhdr* h, unsigned) {
        const uintptr_t page = compat::page_size();
        const uintptr_t a = reinterpret_cast<uintptr_t>(h->addr);
        static_cast<std::vector<MrRange>*>(opaque)->push_back(
            {RTE_ALIGN_FLOOR(a, page), RTE_ALIGN_CEIL(a + h->len, page), kInvalidLkey});
      },
      &out);
  std::sort(out.begin(), out.end(),
            [](const MrRange& x, const MrRange& y) { return x.start < y.start; });
  std::vector<MrRange> merged;
  for (const MrRange& r : out) {
    if (!merged.empty() && r.start < merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(r);
  }
  return merged;
}

void dereg_all(const std::vector<MrEntry>& es, const MrRegistrar& r) {
  for (const MrEntry& e : es)
    if (e.handle != nullptr) r.dereg(r.ctx, e.handle);
}

bool pool_is_registered(MrPortCache& c, const rte_mempool* mp) {
  ReadGuard g(c);
  return has_owner(g.table(), mp);
}

}  // namespace

MrRegistrar verbs_registrar(ibv_pd* pd) { return {verbs_reg, verbs_dereg, pd}; }

int mr_port_cache_init(MrPortCache& c, int socket) {
  std::memset(&c, 0, sizeof(c));
  rte_spinlock_init(&c.lock);
  c.socket = socket;
  c.table = table_alloc(0, socket);
  return c.table != nullptr ? 0 : -ENOMEM;
}

void mr_port_cache_release(MrPortCache& c, const MrRegistrar& r) {
  if (c.table == nullptr) return;
  for (uint32_t i = 0; i < c.table->count; i++)
    if (c.table->entries[i].handle != nullptr) r.dereg(r.ctx, c.table->entries[i].handle);
  free_chain(c.table);
  free_chain(c.retired);
  c.table = nullptr;
  c.retired = nullptr;
}

void mr_port_cache_drop_all(MrPortCache& c, const MrRegistrar& r) {
  MrTable* empty = table_alloc(0, c.socket);
  if (empty == nullptr) {
    MANA_DRV_LOG(ERR, "MR cache: out of DPDK memory: the MRs of the removed VF stay in the table");
    return;
  }
  ReadGuard g(c);  // keeps the dropped table allocated while its MRs are deregistered
  rte_spinlock_lock(&c.lock);
  MrTable* old = c.table;
  __atomic_store_n(&c.table, empty, __ATOMIC_SEQ_CST);
  old->retired_next = c.retired;
  c.retired = old;
  __atomic_fetch_add(&c.generation, 1, __ATOMIC_RELEASE);
  rte_spinlock_unlock(&c.lock);
  for (uint32_t i = 0; i < old->count; i++)
    if (old->entries[i].handle != nullptr) r.dereg(r.ctx, old->entries[i].handle);
}

int mr_register_mempool(MrPortCache& c, rte_mempool* mp, const MrRegistrar& r) {
  if (pool_is_registered(c, mp)) return 0;
  // Register every chunk first, with no lock: this is what takes time (a syscall each, or a
  // request to the primary).
  std::vector<MrEntry> mine;
  for (const MrRange& range : pool_ranges(mp)) {
    MrEntry e{range, nullptr, mp};
    const int rc = r.reg(r.ctx, range.start, range.end - range.start, &e.range.lkey, &e.handle);
    if (rc != 0) {
      MANA_DRV_LOG(ERR, "cannot register memory of mempool %s [%#zx, %#zx): %s", mp->name,
                   static_cast<size_t>(range.start), static_cast<size_t>(range.end), strerror(-rc));
      dereg_all(mine, r);
      return rc;
    }
    mine.push_back(e);
  }
  if (mine.empty()) return 0;  // nothing populated yet: the READY event comes later
  Change ch;
  ch.add = mine.data();
  ch.add_count = static_cast<uint32_t>(mine.size());
  switch (publish(c, ch)) {
    case Published::kDone:
      return 0;
    case Published::kAlreadyThere:  // another thread or process registered it meanwhile
      dereg_all(mine, r);
      return 0;
    case Published::kNoMemory:
      break;
  }
  dereg_all(mine, r);
  MANA_DRV_LOG(ERR, "MR cache: out of DPDK memory while adding mempool %s", mp->name);
  return -ENOMEM;
}

int mr_register_all_mempools(MrPortCache& c, const MrRegistrar& r) {
  // Collect first: registering may take long, not while holding DPDK's mempool list lock.
  std::vector<rte_mempool*> pools;
  rte_mempool_walk(
      [](rte_mempool* mp, void* arg) {
        // A pool still being populated is registered by its READY event; one that is not for I/O
        // only if the data path ever meets one of its buffers.
        if (mp->populated_size >= mp->size && !(mp->flags & RTE_MEMPOOL_F_NON_IO))
          static_cast<std::vector<rte_mempool*>*>(arg)->push_back(mp);
      },
      &pools);
  int first = 0;
  for (rte_mempool* mp : pools) {
    const int rc = mr_register_mempool(c, mp, r);
    if (first == 0) first = rc;
  }
  return first;
}

void mr_deregister_mempool(MrPortCache& c, const rte_mempool* mp, const MrRegistrar& r) {
  if (!pool_is_registered(c, mp)) return;
  Change ch;
  ch.remove = mp;
  if (publish(c, ch) != Published::kDone) {
    // The table keeps the pool's ranges, still registered: correct, only not reclaimed until close.
    MANA_DRV_LOG(WARNING,
                 "MR cache: out of DPDK memory while removing mempool %s: its MRs stay "
                 "until the port is closed",
                 mp->name);
    return;
  }
  // Out of the table before deregistration: no new lookup finds these lkeys.
  dereg_all(ch.removed, r);
}

int mr_port_insert(MrPortCache& c, const MrEntry& e) {
  Change ch;
  ch.add = &e;
  ch.add_count = 1;
  return publish(c, ch) == Published::kDone ? 0 : -ENOMEM;
}

bool mr_port_lookup(MrPortCache& c, uintptr_t addr, uint32_t len, MrRange* out) {
  ReadGuard g(c);
  const MrEntry* e = find(g.table(), addr, len);
  if (e != nullptr) *out = e->range;
  return e != nullptr;
}

uint32_t mr_port_count(MrPortCache& c) {
  ReadGuard g(c);
  return g.table().count;
}

namespace {

void on_mempool_event(rte_mempool_event event, rte_mempool* mp, void* arg) {
  const auto* sub = static_cast<const MrEventSubscription*>(arg);
  if (event == RTE_MEMPOOL_EVENT_READY) {
    if (mp->flags & RTE_MEMPOOL_F_NON_IO) return;
    // A failure is logged by the registration; the data path retries for this pool's buffers.
    mr_register_mempool(*sub->cache, mp, sub->registrar);
  } else if (event == RTE_MEMPOOL_EVENT_DESTROY) {
    mr_deregister_mempool(*sub->cache, mp, sub->registrar);
  }
}

}  // namespace

int mr_events_subscribe(MrEventSubscription* sub) {
  if (rte_mempool_event_callback_register(on_mempool_event, sub) != 0) {
    MANA_DRV_LOG(ERR, "cannot subscribe to mempool events: %s", rte_strerror(rte_errno));
    return -rte_errno;
  }
  return 0;
}

void mr_events_unsubscribe(MrEventSubscription* sub) {
  rte_mempool_event_callback_unregister(on_mempool_event, sub);
}

void mr_queue_cache_reset(MrQueueCache& q) {
  for (MrRange& r : q.recent) r = MrRange{};
  q.next = 0;
  q.generation = 0;
}

void mr_queue_insert(MrQueueCache& q, const MrRange& r) {
  q.recent[q.next] = r;
  q.next = (q.next + 1) & (kMrQueueCacheSize - 1);
}

uint32_t mr_lookup_slow(MrQueueCache& q, MrPortCache& c, uintptr_t addr, uint32_t len,
                        rte_mempool* pool, const MrRegistrar& r) {
  MrRange found;
  if (!mr_port_lookup(c, addr, len, &found)) {
    // Memory no event announced (a pool populated before this process subscribed and not seen at
    // queue setup): register it here, outside any lock; other queues keep running meanwhile.
    if (pool == nullptr || mr_register_mempool(c, pool, r) != 0 ||
        !mr_port_lookup(c, addr, len, &found))
      return kInvalidLkey;
  }
  mr_queue_insert(q, found);
  return found.lkey;
}

}  // namespace mana
