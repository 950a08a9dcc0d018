#include "mr_cache.h"

#include <cerrno>
#include <cstring>

#include <infiniband/verbs.h>
extern "C" {  // this SDK header lacks C++ guards
#include <rte_eal_paging.h>
}
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "mana_log.h"

namespace mana {
namespace {

constexpr uint32_t kInitialEntries = 64;
constexpr uint32_t kInitialPools = 8;

int verbs_reg(void* ctx, uintptr_t start, size_t len, uint32_t* lkey, void** handle) {
  ibv_mr* mr = ibv_reg_mr(static_cast<ibv_pd*>(ctx), reinterpret_cast<void*>(start), len,
                          IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) return -(errno ? errno : ENOMEM);
  *lkey = mr->lkey;
  *handle = mr;
  return 0;
}

void verbs_dereg(void* /*ctx*/, void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); }

// Grows `*array` (of `elem` bytes each) to twice its capacity.
int grow(void** array, uint32_t* capacity, size_t elem, int socket) {
  const uint32_t cap = *capacity * 2;
  void* p = rte_realloc_socket(*array, cap * elem, RTE_CACHE_LINE_SIZE, socket);
  if (p == nullptr) return -ENOMEM;
  *array = p;
  *capacity = cap;
  return 0;
}

// Index of the first entry whose start is greater than `addr`.
uint32_t upper_bound(const MrPortCache& c, uintptr_t addr) {
  uint32_t lo = 0, hi = c.count;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (c.entries[mid].range.start <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Ranges are page-rounded, so neighbouring chunks may overlap: look back from the last entry that
// starts at or before `addr` until one covers it.
const MrEntry* find_locked(const MrPortCache& c, uintptr_t addr, size_t len) {
  for (uint32_t i = upper_bound(c, addr); i > 0; i--)
    if (c.entries[i - 1].range.covers(addr, len)) return &c.entries[i - 1];
  return nullptr;
}

int insert_locked(MrPortCache& c, const MrEntry& e) {
  if (c.count == c.capacity) {
    void* p = c.entries;
    if (int rc = grow(&p, &c.capacity, sizeof(MrEntry), c.socket); rc != 0) return rc;
    c.entries = static_cast<MrEntry*>(p);
  }
  const uint32_t at = upper_bound(c, e.range.start);
  std::memmove(&c.entries[at + 1], &c.entries[at], (c.count - at) * sizeof(MrEntry));
  c.entries[at] = e;
  c.count++;
  return 0;
}

bool pool_known_locked(const MrPortCache& c, const rte_mempool* mp) {
  for (uint32_t i = 0; i < c.pool_count; i++)
    if (c.pools[i] == mp) return true;
  return false;
}

struct ChunkWalk {
  MrPortCache* cache;
  const MrRegistrar* registrar;
  const rte_mempool* mp;
  int rc;
};

void register_chunk(rte_mempool* /*mp*/, void* opaque, rte_mempool_memhdr* memhdr,
                    unsigned /*idx*/) {
  auto* w = static_cast<ChunkWalk*>(opaque);
  if (w->rc != 0) return;
  const uintptr_t page = rte_mem_page_size();
  const uintptr_t addr = reinterpret_cast<uintptr_t>(memhdr->addr);
  const uintptr_t start = RTE_ALIGN_FLOOR(addr, page);
  const uintptr_t end = RTE_ALIGN_CEIL(addr + memhdr->len, page);
  if (find_locked(*w->cache, start, end - start) != nullptr)
    return;  // already covered (e.g. a chunk sharing pages with an earlier one)
  MrEntry e{{start, end, kInvalidLkey}, nullptr};
  int rc = w->registrar->reg(w->registrar->ctx, start, end - start, &e.range.lkey, &e.handle);
  if (rc != 0) {
    MANA_DRV_LOG(ERR, "cannot register memory of mempool %s [%#zx, %#zx): %s", w->mp->name,
                 static_cast<size_t>(start), static_cast<size_t>(end), strerror(-rc));
    w->rc = rc;
    return;
  }
  rc = insert_locked(*w->cache, e);
  if (rc != 0) {
    w->registrar->dereg(w->registrar->ctx, e.handle);
    MANA_DRV_LOG(ERR, "MR cache: out of DPDK memory while adding mempool %s", w->mp->name);
    w->rc = rc;
  }
}

}  // namespace

MrRegistrar verbs_registrar(ibv_pd* pd) { return {verbs_reg, verbs_dereg, pd}; }

int mr_port_cache_init(MrPortCache& c, int socket) {
  std::memset(&c, 0, sizeof(c));
  rte_spinlock_init(&c.lock);
  c.socket = socket;
  c.entries = static_cast<MrEntry*>(rte_zmalloc_socket("mana_mr", kInitialEntries * sizeof(MrEntry),
                                                       RTE_CACHE_LINE_SIZE, socket));
  c.pools = static_cast<const rte_mempool**>(rte_zmalloc_socket(
      "mana_mr_pools", kInitialPools * sizeof(rte_mempool*), RTE_CACHE_LINE_SIZE, socket));
  if (c.entries == nullptr || c.pools == nullptr) {
    rte_free(c.entries);
    rte_free(c.pools);
    c.entries = nullptr;
    c.pools = nullptr;
    return -ENOMEM;
  }
  c.capacity = kInitialEntries;
  c.pool_capacity = kInitialPools;
  return 0;
}

void mr_port_cache_release(MrPortCache& c, const MrRegistrar& r) {
  rte_spinlock_lock(&c.lock);
  for (uint32_t i = 0; i < c.count; i++) r.dereg(r.ctx, c.entries[i].handle);
  rte_free(c.entries);
  rte_free(c.pools);
  c.entries = nullptr;
  c.pools = nullptr;
  c.count = c.capacity = c.pool_count = c.pool_capacity = 0;
  rte_spinlock_unlock(&c.lock);
}

void mr_port_cache_drop_all(MrPortCache& c, const MrRegistrar& r) {
  rte_spinlock_lock(&c.lock);
  for (uint32_t i = 0; i < c.count; i++) r.dereg(r.ctx, c.entries[i].handle);
  c.count = c.pool_count = 0;
  rte_spinlock_unlock(&c.lock);
}

int mr_register_mempool(MrPortCache& c, rte_mempool* mp, const MrRegistrar& r) {
  rte_spinlock_lock(&c.lock);
  int rc = 0;
  if (!pool_known_locked(c, mp)) {
    if (c.pool_count == c.pool_capacity) {
      void* p = c.pools;
      rc = grow(&p, &c.pool_capacity, sizeof(rte_mempool*), c.socket);
      if (rc == 0) c.pools = static_cast<const rte_mempool**>(p);
    }
    if (rc == 0) {
      ChunkWalk walk{&c, &r, mp, 0};
      rte_mempool_mem_iter(mp, register_chunk, &walk);
      rc = walk.rc;
      // Chunks registered before a failure stay in the table (released at close); the pool is
      // only marked known when all of it is covered, so a later attempt retries the rest.
      if (rc == 0) c.pools[c.pool_count++] = mp;
    }
  }
  rte_spinlock_unlock(&c.lock);
  return rc;
}

int mr_port_insert(MrPortCache& c, const MrEntry& e) {
  rte_spinlock_lock(&c.lock);
  const int rc = insert_locked(c, e);
  rte_spinlock_unlock(&c.lock);
  return rc;
}

bool mr_port_lookup(MrPortCache& c, uintptr_t addr, uint32_t len, MrRange* out) {
  rte_spinlock_lock(&c.lock);
  const MrEntry* e = find_locked(c, addr, len);
  if (e != nullptr) *out = e->range;
  rte_spinlock_unlock(&c.lock);
  return e != nullptr;
}

void mr_queue_cache_reset(MrQueueCache& q) {
  for (MrRange& r : q.recent) r = MrRange{};
  q.next = 0;
}

void mr_queue_insert(MrQueueCache& q, const MrRange& r) {
  q.recent[q.next] = r;
  q.next = (q.next + 1) & (kMrQueueCacheSize - 1);
}

uint32_t mr_lookup_slow(MrQueueCache& q, MrPortCache& c, uintptr_t addr, uint32_t len,
                        rte_mempool* pool, const MrRegistrar& r) {
  MrRange found;
  if (!mr_port_lookup(c, addr, len, &found)) {
    if (pool == nullptr || mr_register_mempool(c, pool, r) != 0 ||
        !mr_port_lookup(c, addr, len, &found))
      return kInvalidLkey;
  }
  mr_queue_insert(q, found);
  return found.lkey;
}

}  // namespace mana
