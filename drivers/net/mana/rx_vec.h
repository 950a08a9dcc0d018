// SPDX-License-Identifier: BSD-3-Clause
// Vector kernels of the RX burst (rx_burst.cpp): four common CQEs (okay, one packet that fits its
// buffer, the flags the queue decoded last) per step, each mbuf written with two 16-byte stores.
// Everything else stays with the scalar path, which the kernels hand back to at the first group
// of four holding any other CQE. Which kernel a port runs: rx_simd.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include <rte_byteorder.h>
#include <rte_mbuf_core.h>

#include "burst.h"
#include "mana/gdma_format.h"

namespace mana {

// What a kernel writes into every mbuf of a run: the queue's rearm word and the metadata of the
// flags word `dw1` (priv.h RxMeta), and the buffer size a packet must fit. `owner`: the owner word
// (dw15) a completed CQE of this RQ carries in the run's lap, under kRxOwnerCheckMask (the x86
// kernels check it; the Neon one runs on CQEs known to be completed). `frame_offset`: from an mbuf
// to its frame when the pool's layout gives it (priv.h RxQueue::frame_offset; the AVX2 kernel uses
// it), else 0.
struct RxVecMeta {
  uint64_t rearm;
  uint64_t ol_flags;
  uint32_t dw1;
  uint32_t ptype;
  uint32_t buf_len;
  uint16_t vlan_tci;
  uint32_t owner;
  uint32_t frame_offset;
};

// Where dw15 keeps the owner bits (its top 3).
inline constexpr unsigned kRxOwnerShift = 29;
static_assert(hw::Cqe::Owner::get(7u << kRxOwnerShift) == 7 && hw::Cqe::Owner::get(~0u >> 3) == 0);

// The bits of dw15 a CQE of this RQ must match: owner (checked per lap), is_sq 0 and wq_num the
// RQ's id, as the kernel's mana_poll_rx_cq checks them (doc/hardware.md §4.7).
inline constexpr uint32_t kRxOwnerCheckMask =
    7u << kRxOwnerShift | hw::Cqe::IsSq::set(0, 1) | hw::kQueueIdMask;

// The owner word of a completed CQE of RQ `rq_id` at free-running CQ index `head` (always inlined:
// the x86 kernels use it too).
__attribute__((always_inline)) inline uint32_t rx_owner_word(uint32_t head, unsigned log2_count,
                                                             uint32_t rq_id) {
  return ((head >> log2_count) & hw::kOwnerMask) << kRxOwnerShift | rq_id;
}

// The EtherTypes the packet type tells apart, as on the wire (rx_cqe.h rx_l3_ptype_of_frame):
// constants, so that no byte swap is called from a kernel of another target.
inline constexpr uint32_t kRxEtherIpv4 = RTE_BE16(0x0800);
inline constexpr uint32_t kRxEtherIpv6 = RTE_BE16(0x86DD);

// How many CQEs a kernel took and the bytes of their packets.
struct RxVecTaken {
  uint32_t cqes;
  uint32_t bytes;
};

// The kernels: from `cqe` (at most `n`, neither the CQ nor `slot` wrapping), groups of four whose
// CQEs all carry `m.dw1` and one packet of 1..buf_len bytes. Neon: every one of the `n`
// completed. SSE4.1 and AVX2: each group's owner words are read first (x86 keeps loads in order)
// and must match `m.owner`, so that they may run on CQEs nobody polled yet. The mbufs of
// `slot` get the metadata (hash.rss the CQE's hash, as the scalar path writes it) and go to `out`;
// `kL3FromFrame`: the L3 packet type comes from the frame's EtherType (rx_cqe.h RxPtype). Stops
// at the first group with any other CQE.
// x86: each kernel is compiled for its ISA by function attribute (on the first declaration, which
// GCC takes for a template), the rest of the driver for the build's baseline. Hidden: called
// directly, not through the PLT.
#define MANA_KERNEL __attribute__((visibility("hidden")))
#if defined(__x86_64__)
#define MANA_SSE41 MANA_KERNEL __attribute__((target("sse4.1")))
#define MANA_AVX2 MANA_KERNEL __attribute__((target("avx2,tune=haswell")))
#else
#define MANA_SSE41 MANA_KERNEL
#define MANA_AVX2 MANA_KERNEL
#endif

template <bool kL3FromFrame>
MANA_SSE41 RxVecTaken rx_vec_take_sse(const RxVecMeta& m, const hw::Cqe* cqe, rte_mbuf* const* slot,
                                      rte_mbuf** out, unsigned n);
template <bool kL3FromFrame>
MANA_AVX2 RxVecTaken rx_vec_take_avx2(const RxVecMeta& m, const hw::Cqe* cqe, rte_mbuf* const* slot,
                                      rte_mbuf** out, unsigned n);
template <bool kL3FromFrame>
MANA_KERNEL RxVecTaken rx_vec_take_neon(const RxVecMeta& m, const hw::Cqe* cqe,
                                        rte_mbuf* const* slot, rte_mbuf** out, unsigned n);

// AVX2 helpers of the rest of the burst (rx_burst.cpp). rx_vec_ready_avx2: of the `n` CQEs whose
// owner words (dw15) start at `owner`, how many lead in groups of eight whose every owner word
// matches `want` under `mask` (one gather and one test per group). rx_vec_post_avx2: posts `n`
// buffers, `fresh` into `slot` and each one's data address into the SGE at `sge`, one RQ WQE
// (32 bytes) apart; neither ring wraps.
MANA_AVX2 unsigned rx_vec_ready_avx2(const uint32_t* owner, unsigned n, uint32_t want,
                                     uint32_t mask);
MANA_AVX2 void rx_vec_post_avx2(rte_mbuf* const* fresh, rte_mbuf** slot, uint8_t* sge, unsigned n,
                                uint32_t frame_offset);

// The mbuf fields the kernels store at once: rearm_data and ol_flags (16 bytes), then packet_type,
// pkt_len, data_len, vlan_tci and hash.rss (16 bytes).
inline constexpr size_t kRxRearmOffset = offsetof(rte_mbuf, rearm_data);
inline constexpr size_t kRxFieldsOffset = offsetof(rte_mbuf, packet_type);
static_assert(offsetof(rte_mbuf, ol_flags) == kRxRearmOffset + 8);
static_assert(kRxRearmOffset % 16 == 0 && kRxFieldsOffset == kRxRearmOffset + 16);
static_assert(offsetof(rte_mbuf, pkt_len) == kRxFieldsOffset + 4);
static_assert(offsetof(rte_mbuf, data_len) == kRxFieldsOffset + 8);
static_assert(offsetof(rte_mbuf, vlan_tci) == kRxFieldsOffset + 10);
static_assert(offsetof(rte_mbuf, hash.rss) == kRxFieldsOffset + 12);

}  // namespace mana
