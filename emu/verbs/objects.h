// SPDX-License-Identifier: BSD-3-Clause
// The emulated verbs objects. Each starts with the rdma-core struct the application holds, so a
// pointer the application passes back converts to ours; every object reaches its context through
// the rdma-core struct's `context` member, and a context is recognised as ours by a marker op.
#pragma once

#include <infiniband/manadv.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace mana::emu {
class Device;
namespace doorbell {
class DoorbellFifo;
}
}  // namespace mana::emu

namespace mana::emu::verbs {

struct VfRuntime;
struct EmuIndTable;

struct EmuDevice {
  ibv_device ibv;  // first: what ibv_get_device_list hands out
  unsigned vf = 0;
  bool rnic = false;  // RNIC device of the 2025 split: refuses raw QPs
  uint32_t vendor_part_id = 0;
  uint32_t port_count = 1;
  uint32_t raw_packet_caps = 0;
};

struct EmuContext {
  verbs_context vctx;  // first; ends with the ibv_context the application holds
  EmuDevice* dev = nullptr;
  VfRuntime* vf = nullptr;
  Device* device = nullptr;  // null: query-only (another process runs the VF)
  uint32_t context_id = 0;
  volatile uint64_t* db_page = nullptr;  // this process's mapping of cmd_fd page 0
  size_t cmd_bytes = 0;                  // size of the cmd_fd memfd mapping below
  void* cmd_map = nullptr;               // pages 1.. of the memfd (header + doorbell FIFO)
  manadv_ctx_allocators allocators{};    // set by manadv_set_context_attr
  uint32_t live_sqs = 0;                 // poll-mode doorbells allow one SQ and one RQ
  uint32_t live_wqs = 0;
  // Lockstep with polled doorbells (held_doorbells.h): the FIFO of the held page's stores, and
  // whether the page is held (trapped) now.
  mana::emu::doorbell::DoorbellFifo* held_fifo = nullptr;
  bool doorbells_held = false;
  std::mutex async_lock;
  std::deque<ibv_async_event> async_events;  // counted by the async_fd semaphore eventfd
};

struct EmuPd {
  ibv_pd ibv;
  uint32_t pd_id = 0;          // device PD (a parent domain's is its PD's)
  bool parent = false;         // a parent domain (ibv_alloc_parent_domain)
  void* pd_context = nullptr;  // parent domain: DPDK passes the IB port here
};

struct EmuMr {
  ibv_mr ibv;
};

struct EmuChannel {
  ibv_comp_channel ibv;  // fd: an epoll set over the eventfds of its CQs
};

struct EmuCq {
  ibv_cq ibv;
  void* buf = nullptr;
  uint64_t buf_bytes = 0;
  uint32_t count = 0;
  uint32_t handle = 0;
  uint32_t cq_id = 0;  // known once a raw QP or an RSS QP binds the CQ
  int event_fd = -1;   // the device signals it when armed; -1 without a channel
  // An RDMA CQ (libmana >= 53 without allocators, doc/hardware.md §9.21): in libmana's own
  // memory, refused by raw and RSS QPs.
  bool rnic = false;
};

struct EmuQp {
  ibv_qp ibv;
  uint32_t handle = 0;
  bool rss = false;
  void* sq_buf = nullptr;
  uint64_t sq_bytes = 0;
  uint32_t sq_count = 0;
  uint32_t sq_id = 0;
  uint32_t tx_vp_offset = 0;
  std::vector<uint32_t> rq_ids;  // RSS QP: the RQs it instantiated
  EmuIndTable* table = nullptr;  // RSS QP: its indirection table (which it keeps busy)
};

struct EmuWq {
  ibv_wq ibv;
  uint32_t handle = 0;
  void* buf = nullptr;
  uint64_t buf_bytes = 0;
  uint32_t count = 0;
  uint32_t wq_id = 0;  // known once an RSS QP binds the WQ
  EmuCq* cq = nullptr;
  uint32_t table_entries = 0;  // indirection-table entries naming it: destroying it is EBUSY
};

struct EmuIndTable {
  ibv_rwq_ind_table ibv;
  std::vector<EmuWq*> wqs;
  uint32_t log_size = 0;
  uint32_t qps = 0;  // RSS QPs over it: destroying it is EBUSY
};

// ---- recognition and conversion
// ------------------------------------------------------------------
bool is_emu_context(const ibv_context* ctx);
// True (errno EOPNOTSUPP, one line on stderr) for a query-only context, which creates no object.
bool refuse_query_only(const EmuContext* ctx);
bool is_emu_device(const ibv_device* dev);
inline EmuContext* emu(ibv_context* ctx) {
  return reinterpret_cast<EmuContext*>(verbs_get_ctx(ctx));
}
inline EmuDevice* emu(ibv_device* d) { return reinterpret_cast<EmuDevice*>(d); }
inline EmuPd* emu(ibv_pd* p) { return reinterpret_cast<EmuPd*>(p); }
inline EmuMr* emu(ibv_mr* m) { return reinterpret_cast<EmuMr*>(m); }
inline EmuCq* emu(ibv_cq* c) { return reinterpret_cast<EmuCq*>(c); }
inline EmuQp* emu(ibv_qp* q) { return reinterpret_cast<EmuQp*>(q); }
inline EmuWq* emu(ibv_wq* w) { return reinterpret_cast<EmuWq*>(w); }
inline EmuIndTable* emu(ibv_rwq_ind_table* t) { return reinterpret_cast<EmuIndTable*>(t); }
inline EmuChannel* emu(ibv_comp_channel* c) { return reinterpret_cast<EmuChannel*>(c); }

// Fills the ops of a fresh context (the verbs_context ops the static inlines use and the
// ibv_context_ops data-path stubs, which libmana also leaves unsupported).
void init_context_ops(EmuContext* ctx);

// The verbs_context ops of the objects (parent domain, WQ, indirection table, extended QP).
void init_object_ops(EmuContext* ctx);
void init_pd_ops(EmuContext* ctx);
void init_qp_ops(EmuContext* ctx);

}  // namespace mana::emu::verbs
