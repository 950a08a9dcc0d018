// SPDX-License-Identifier: BSD-3-Clause
// TX completion (doc/hardware.md §4.7, §4.9): which descriptors a TX CQE completes. The NIC works
// through the SQ in order, so a CQE for the WQE at `tx_wqe_offset` completes every earlier one too;
// an error CQE, also produced for a failed suppressed WQE, names that WQE. The field's unit is not
// public (basic units or bytes), so the queue learns it from okay CQEs and uses it only where it
// names an outstanding WQE; otherwise the order rule decides and never completes too much.
// No locks, allocation, division or logging.
#include <cstring>

#include <rte_mbuf.h>

#include "burst.h"
#include "priv.h"

namespace mana {
namespace {

unsigned tx_error_kind(uint32_t type) {
  if (type >= hw::kCqeTxSaDrop && type <= hw::kCqeTxVlanTaggingViolation)
    return type - hw::kCqeTxSaDrop;
  return kTxCqeErrorKinds - 1;
}

// Descriptors from the tail through the one whose WQE starts at ring position `bu` (basic units);
// 0 if no outstanding WQE starts there.
uint32_t descs_through(const TxQueue& q, uint32_t bu) {
  const uint32_t ring_bu_mask = q.sq.size_mask / hw::kBasicUnit;  // ring bytes: a power of two
  const uint32_t dist = (bu - q.sq.tail_bu) & ring_bu_mask;
  // One-BU WQEs (short OOB, one segment: the common case): the WQE `dist` BUs on is the `dist`th.
  if (dist < q.desc_head - q.desc_tail &&
      q.descs[(q.desc_tail + dist) & q.desc_mask].start_bu == q.sq.tail_bu + dist)
    return dist + 1;
  uint32_t at = 0;
  for (uint32_t i = q.desc_tail, n = 1; i != q.desc_head && at <= dist; i++, n++) {
    if (at == dist) return n;
    at += q.descs[i & q.desc_mask].bu;
  }
  return 0;
}

// The WQE a CQE names under one reading of tx_wqe_offset: descriptors through it, or 0.
uint32_t named_descs(const TxQueue& q, uint32_t field, uint8_t unit) {
  if (unit == kWqeOffsetBytes) {
    if (field % hw::kBasicUnit != 0) return 0;
    return descs_through(q, field / hw::kBasicUnit);
  }
  return descs_through(q, field);
}

// The order rule: descriptors through the first one posted without suppression.
uint32_t batch_descs(const TxQueue& q) {
  uint32_t n = 0;
  for (uint32_t i = q.desc_tail; i != q.desc_head;) {
    n++;
    if (!q.descs[i++ & q.desc_mask].suppressed) break;
  }
  return n;
}

// How many descriptors the CQE completes, learning the offset unit from okay CQEs: an okay CQE
// names the end of the oldest batch, and only the right reading of the field points there (both
// readings agree only at ring position 0).
uint32_t descs_completed(TxQueue& q, const hw::Cqe& cqe, bool okay) {
  const uint32_t field = hw::Cqe::TxWqeOffset::get(cqe.dw[hw::Cqe::kTxWqeOffsetDword]);
  if (q.wqe_offset_unit != kWqeOffsetUnknown) {
    if (const uint32_t n = named_descs(q, field, q.wqe_offset_unit); n != 0) return n;
  }
  const uint32_t batch = batch_descs(q);
  const uint32_t as_bu = named_descs(q, field, kWqeOffsetBu);
  const uint32_t as_bytes = named_descs(q, field, kWqeOffsetBytes);
  if (okay) {
    if ((as_bu == batch) != (as_bytes == batch))
      q.wqe_offset_unit = as_bu == batch ? kWqeOffsetBu : kWqeOffsetBytes;
    else if (as_bu != batch)
      q.wqe_offset_unit = kWqeOffsetUnknown;  // the field names no batch end: stop trusting it
    return batch;
  }
  // An error CQE names a WQE of the oldest batch: of the readings that point into it, the earlier
  // is the safe one (a later CQE completes the rest); none: the oldest descriptor alone.
  uint32_t n = as_bu <= batch ? as_bu : 0;
  if (as_bytes != 0 && as_bytes <= batch && (n == 0 || as_bytes < n)) n = as_bytes;
  return n != 0 ? n : (batch != 0 ? 1 : 0);
}

// What rte_pktmbuf_prefree_seg has nothing to do for: refcnt 1, one segment, direct; as one
// value that is 0 for such an mbuf of `pool` (a load of refcnt and nb_segs together).
inline uint64_t not_plain(const rte_mbuf* m, const rte_mempool* pool) {
  static_assert(offsetof(rte_mbuf, nb_segs) == offsetof(rte_mbuf, refcnt) + sizeof(uint16_t));
  uint32_t refcnt_segs;
  std::memcpy(&refcnt_segs, &m->refcnt, sizeof(refcnt_segs));
  constexpr uint32_t kPlain = 1u | 1u << 16;  // little endian: refcnt 1, nb_segs 1
  return (refcnt_segs ^ kPlain) | (m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL)) |
         (reinterpret_cast<uintptr_t>(m->pool) ^ reinterpret_cast<uintptr_t>(pool));
}

// Frees the mbufs of `n` descriptors from `first` (free-running index), straight from the queue's
// mbuf ring, a run that does not wrap at a time. With MBUF_FAST_FREE the application promised one
// pool, refcnt 1 and direct mbufs, but not one segment (DPDK 26.07 says so in as many words;
// earlier releases never promised it): one bulk put when every WQE of the run took one basic unit,
// which only a one-segment packet does, without reading the mbufs (each WQE takes at least one
// unit: the run's units equal its length only then). Otherwise the same put when a look at each
// mbuf shows that this holds, else the generic free (which follows chains).
void free_descs(TxQueue& q, uint32_t first, uint32_t n) {
  static_assert(RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN);
  while (n != 0) {
    const uint32_t at = first & q.desc_mask;
    const unsigned nb = RTE_MIN(n, q.desc_mask + 1 - at);
    rte_mbuf** const ms = q.mbufs + at;
    rte_mempool* const pool = ms[0]->pool;
    uint64_t bad = 0;
    if (q.fast_free) {
      const TxDesc& last = q.descs[at + nb - 1];
      bad = last.start_bu + last.bu - q.descs[at].start_bu - nb;
    } else {
      for (unsigned k = 0; k < nb; k++) bad |= not_plain(ms[k], pool);
    }
    if (bad == 0)
      rte_mempool_put_bulk(pool, reinterpret_cast<void**>(ms), nb);
    else
      rte_pktmbuf_free_bulk(ms, nb);
    first += nb;
    n -= nb;
  }
}

// A CQE in the queue's CQ is for its SQ when is_sq is set, wq_num is the SQ's id and the client
// type is "completion", as the kernel's mana_poll_tx_cq expects (doc/hardware.md §4.7). Anything
// else is not processed as ours: it would complete (and free) WQEs the NIC has not sent. An okay
// CQE's type and client type are one compare of dw0 (kOkayWord), its queue one of dw15.
constexpr uint32_t kTypeAndClientMask =
    hw::Cqe::Type::set(0, ~0u) | hw::Cqe::ClientType::set(0, ~0u);
constexpr uint32_t kOkayWord =
    hw::Cqe::ClientType::set(hw::Cqe::Type::set(0, hw::kCqeTxOkay), hw::kClientTypeCompletion);
constexpr uint32_t kQueueMask = hw::Cqe::IsSq::set(0, 1) | hw::kQueueIdMask;

}  // namespace

// The SQ's tail follows the descriptors: the start of the oldest WQE still outstanding, without
// adding up the sizes of the completed ones.
uint32_t tx_reclaim(TxQueue& q) {
  const uint32_t first = q.desc_tail;
  const hw::Cqe* cqe;
  const uint32_t ours = hw::Cqe::IsSq::set(q.sq.id, 1);
  while (cq_peek(q.cq, &cqe) == CqPoll::kValid) {
    const uint32_t dw0 = cqe->dw[0];
    const bool okay = (dw0 & kTypeAndClientMask) == kOkayWord;
    q.cq.head++;
    if (__builtin_expect(((cqe->dw[hw::Cqe::kOwnerDword] ^ ours) & kQueueMask) != 0 ||
                             (!okay && hw::Cqe::ClientType::get(dw0) != hw::kClientTypeCompletion),
                         0)) {
      q.stats.misdirected_cqes++;
      continue;
    }
    const uint32_t type = hw::Cqe::Type::get(dw0);
    if (!okay) {
      q.stats.errors++;
      q.stats.cqe_errors[tx_error_kind(type)]++;
    }
    q.desc_tail += descs_completed(q, *cqe, okay);
    q.sq.tail_bu =
        q.desc_tail == q.desc_head ? q.sq.head_bu : q.descs[q.desc_tail & q.desc_mask].start_bu;
  }
  const uint32_t completed = q.desc_tail - first;
  if (completed != 0) free_descs(q, first, completed);
  if (cq_doorbell_due(q.cq)) ring_cq_doorbell(process_private_of(q.port_id).db_page, q.cq, false);
  return completed;
}

}  // namespace mana
