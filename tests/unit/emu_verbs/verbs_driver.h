// SPDX-License-Identifier: BSD-3-Clause
// A driver-like user of the verbs/manadv API, creating every object the way DPDK's net_mana does
// (doc/hardware.md §2.1, §2.3, §2.4) and running a minimal data path over the returned rings
// (doc/hardware.md §4). Only the real rdma-core API and headers are used: under LD_PRELOAD they
// reach libmana_emu.so.
#pragma once

#include <infiniband/manadv.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

namespace mana::emu::test {

// The ibv_device of a PCI function (by <ibdev_path>/device/uevent) that accepts raw QPs (the
// 22.11.9+ filter of doc/hardware.md §2.1 step 4); nullptr when none. `list` must stay alive.
ibv_device* find_device(ibv_device** list, const std::string& pci, bool skip_rnic = true);

// Reads a whole sysfs-style file ("" when missing).
std::string read_file(const std::string& path);

// Page-aligned, zeroed buffers as DPDK's allocator hands out; counts live allocations.
struct Allocator {
  static void* alloc(size_t size, void* data);
  static void free(void* ptr, void* data);
  static int live();
  static manadv_ctx_allocators callbacks();
};

// One DPDK port: a context with its PD and parent domain (pd_context = IB port).
struct PortObjects {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_pd* ppd = nullptr;
  bool open(ibv_device* dev, uint32_t ib_port);
  // manadv_set_context_attr with the test allocator (as DPDK does before creating queues).
  int set_allocators();
  void close();  // destroys whatever is still there, in DPDK's order, checking each return
};

struct TxQueue {
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  manadv_qp mqp{};
  manadv_cq mcq{};
  uint32_t head_bu = 0;  // producer, in basic units
  uint32_t cq_head = 0;  // consumer, in CQEs (starts at count)
  // ibv_create_cq + raw ibv_create_qp + manadv_init_obj; errno-style result (0 on success).
  int create(PortObjects& port, uint32_t nb_desc);
  void destroy();
};

struct RxQueue {
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  ibv_wq* wq = nullptr;
  ibv_rwq_ind_table* ind = nullptr;
  ibv_qp* rss = nullptr;
  manadv_rwq mrwq{};
  manadv_cq mcq{};
  uint32_t head_bu = 0;
  uint32_t cq_head = 0;
  int create(PortObjects& port, uint32_t nb_desc, bool with_channel = false);
  void destroy();
};

// A memory region of packet buffers registered on the plain PD (as DPDK's MR cache does).
struct PacketMemory {
  std::vector<uint8_t>* storage = nullptr;
  uint8_t* base = nullptr;
  size_t size = 0;
  ibv_mr* mr = nullptr;
  bool reg(ibv_pd* pd, size_t bytes);
  void dereg();
};

// Data path helpers (ring memory and doorbells exactly as doc/hardware.md §4.2-§4.8).
void post_rx(RxQueue& rxq, uint64_t addr, uint32_t lkey, uint32_t len);
void ring_rq(RxQueue& rxq);
void post_tx(TxQueue& txq, uint64_t addr, uint32_t lkey, uint32_t len);
void ring_sq(TxQueue& txq);
void arm_cq(void* db_page, uint32_t cq_id, uint32_t cq_head, uint32_t count);
// Waits up to `timeout_ms` for the next CQE of a ring; copies it and advances the head.
bool wait_cqe(void* buf, uint32_t count, uint32_t* head, void* cqe_out, int timeout_ms);

}  // namespace mana::emu::test

// A verbs call that returns a pointer fails with `err` in errno (GoogleTest assertions).
#define EXPECT_FAILS_WITH(call, err)  \
  do {                                \
    errno = 0;                        \
    EXPECT_EQ((call), nullptr);       \
    EXPECT_EQ(errno, (err)) << #call; \
  } while (0)
