// SPDX-License-Identifier: BSD-3-Clause
#include "verbs_driver.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "mana/gdma_format.h"

namespace mana::emu::test {

namespace hw = mana::hw;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ibv_device* find_device(ibv_device** list, const std::string& pci, bool skip_rnic) {
  for (int i = 0; list != nullptr && list[i] != nullptr; ++i) {
    const std::string uevent = read_file(std::string(list[i]->ibdev_path) + "/device/uevent");
    if (uevent.find("PCI_SLOT_NAME=" + pci + "\n") == std::string::npos) continue;
    if (skip_rnic) {
      ibv_context* ctx = ibv_open_device(list[i]);
      if (ctx == nullptr) continue;
      ibv_device_attr_ex attr{};
      const int rc = ibv_query_device_ex(ctx, nullptr, &attr);
      ibv_close_device(ctx);
      if (rc != 0) continue;
      if (attr.orig_attr.vendor_part_id != 0 &&
          (attr.orig_attr.vendor_part_id != 2 || attr.raw_packet_caps == 0)) {
        continue;
      }
    }
    return list[i];
  }
  return nullptr;
}

namespace {
std::atomic<int> g_live_buffers{0};
}

void* Allocator::alloc(size_t size, void*) {
  void* p = aligned_alloc(4096, (size + 4095) & ~size_t{4095});
  if (p != nullptr) {
    memset(p, 0, size);
    ++g_live_buffers;
  }
  return p;
}

void Allocator::free(void* ptr, void*) {
  if (ptr == nullptr) return;
  --g_live_buffers;
  ::free(ptr);
}

int Allocator::live() { return g_live_buffers.load(); }

manadv_ctx_allocators Allocator::callbacks() {
  return manadv_ctx_allocators{&Allocator::alloc, &Allocator::free, nullptr};
}

int PortObjects::set_allocators() {
  manadv_ctx_allocators a = Allocator::callbacks();
  return manadv_set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &a);
}

bool PortObjects::open(ibv_device* dev, uint32_t ib_port) {
  ctx = ibv_open_device(dev);
  if (ctx == nullptr) return false;
  pd = ibv_alloc_pd(ctx);
  if (pd == nullptr) return false;
  ibv_parent_domain_init_attr attr{};
  attr.pd = pd;
  attr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
  attr.pd_context = reinterpret_cast<void*>(uintptr_t{ib_port});
  ppd = ibv_alloc_parent_domain(ctx, &attr);
  return ppd != nullptr;
}

void PortObjects::close() {
  if (ppd != nullptr && ibv_dealloc_pd(ppd) == 0) ppd = nullptr;
  if (pd != nullptr && ibv_dealloc_pd(pd) == 0) pd = nullptr;
  if (ctx != nullptr && ibv_close_device(ctx) == 0) ctx = nullptr;
}

int TxQueue::create(PortObjects& port, uint32_t nb_desc) {
  if (int rc = port.set_allocators()) return rc;
  cq = ibv_create_cq(port.ctx, static_cast<int>(nb_desc), nullptr, nullptr, 0);
  if (cq == nullptr) return errno;
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.cap.max_send_wr = nb_desc;
  attr.cap.max_send_sge = 15;
  attr.qp_type = IBV_QPT_RAW_PACKET;
  qp = ibv_create_qp(port.ppd, &attr);
  if (qp == nullptr) return errno;
  manadv_obj obj{};
  obj.qp.in = qp;
  obj.qp.out = &mqp;
  obj.cq.in = cq;
  obj.cq.out = &mcq;
  if (int rc = manadv_init_obj(&obj, MANADV_OBJ_QP | MANADV_OBJ_CQ)) return rc;
  cq_head = hw::cq_initial_head(mcq.count);
  return 0;
}

void TxQueue::destroy() {
  if (qp != nullptr && ibv_destroy_qp(qp) == 0) qp = nullptr;
  if (cq != nullptr && ibv_destroy_cq(cq) == 0) cq = nullptr;
}

int RxQueue::create(PortObjects& port, uint32_t nb_desc, bool with_channel) {
  if (int rc = port.set_allocators()) return rc;
  if (with_channel) {
    channel = ibv_create_comp_channel(port.ctx);
    if (channel == nullptr) return errno;
  }
  cq = ibv_create_cq(port.ctx, static_cast<int>(nb_desc), this, channel, 0);
  if (cq == nullptr) return errno;
  ibv_wq_init_attr wq_attr{};
  wq_attr.wq_type = IBV_WQT_RQ;
  wq_attr.max_wr = nb_desc;
  wq_attr.max_sge = 1;
  wq_attr.pd = port.ppd;
  wq_attr.cq = cq;
  wq = ibv_create_wq(port.ctx, &wq_attr);
  if (wq == nullptr) return errno;
  ibv_rwq_ind_table_init_attr ind_attr{};
  ind_attr.log_ind_tbl_size = 0;
  ind_attr.ind_tbl = &wq;
  ind = ibv_create_rwq_ind_table(port.ctx, &ind_attr);
  if (ind == nullptr) return errno;
  static uint8_t key[hw::kRssKeySize] = {
      0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a,
      0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7,
      0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a};
  ibv_qp_init_attr_ex qp_attr{};
  qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE;
  qp_attr.qp_type = IBV_QPT_RAW_PACKET;
  qp_attr.pd = port.ppd;
  qp_attr.rwq_ind_tbl = ind;
  qp_attr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
  qp_attr.rx_hash_conf.rx_hash_key_len = sizeof(key);
  qp_attr.rx_hash_conf.rx_hash_key = key;
  qp_attr.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
  rss = ibv_create_qp_ex(port.ctx, &qp_attr);
  if (rss == nullptr) return errno;
  manadv_obj obj{};
  obj.cq.in = cq;
  obj.cq.out = &mcq;
  obj.rwq.in = wq;
  obj.rwq.out = &mrwq;
  if (int rc = manadv_init_obj(&obj, MANADV_OBJ_CQ | MANADV_OBJ_RWQ)) return rc;
  cq_head = hw::cq_initial_head(mcq.count);
  return 0;
}

void RxQueue::destroy() {
  if (rss != nullptr && ibv_destroy_qp(rss) == 0) rss = nullptr;
  if (ind != nullptr && ibv_destroy_rwq_ind_table(ind) == 0) ind = nullptr;
  if (wq != nullptr && ibv_destroy_wq(wq) == 0) wq = nullptr;
  if (cq != nullptr && ibv_destroy_cq(cq) == 0) cq = nullptr;
  if (channel != nullptr && ibv_destroy_comp_channel(channel) == 0) channel = nullptr;
}

bool PacketMemory::reg(ibv_pd* pd, size_t bytes) {
  size = bytes;
  base = static_cast<uint8_t*>(aligned_alloc(4096, bytes));
  if (base == nullptr) return false;
  memset(base, 0, bytes);
  mr = ibv_reg_mr(pd, base, bytes, IBV_ACCESS_LOCAL_WRITE);
  return mr != nullptr;
}

void PacketMemory::dereg() {
  if (mr != nullptr && ibv_dereg_mr(mr) == 0) mr = nullptr;
  if (mr == nullptr) {
    ::free(base);
    base = nullptr;
  }
}

namespace {

// Copies a WQE (header, OOB, one SGE: always 32 or 64 bytes here) into a ring at `head_bu`.
uint32_t write_wqe(uint8_t* ring, uint32_t ring_bytes, uint32_t head_bu, const void* oob,
                   uint32_t oob_bytes, const hw::Sge& sge) {
  uint8_t wqe[64] = {};
  const hw::WqeHeader header = hw::WqeHeader::make(1, oob_bytes);
  memcpy(wqe, &header, sizeof(header));
  memcpy(wqe + sizeof(header), oob, oob_bytes);
  memcpy(wqe + sizeof(header) + oob_bytes, &sge, sizeof(sge));
  const uint32_t bytes = hw::wqe_size(oob_bytes, 1);
  for (uint32_t i = 0; i < bytes; ++i)
    ring[(head_bu * hw::kBasicUnit + i) & (ring_bytes - 1)] = wqe[i];
  return bytes / hw::kBasicUnit;
}

void store_doorbell(void* db_page, uint32_t offset, uint64_t value) {
  // Release: the ring writes before the doorbell (a polling device loads it with acquire).
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(static_cast<uint8_t*>(db_page) + offset))
      .store(value, std::memory_order_release);
}

}  // namespace

void post_rx(RxQueue& rxq, uint64_t addr, uint32_t lkey, uint32_t len) {
  const uint8_t oob[8] = {};
  rxq.head_bu += write_wqe(static_cast<uint8_t*>(rxq.mrwq.buf), rxq.mrwq.size, rxq.head_bu, oob,
                           sizeof(oob), hw::Sge{addr, lkey, len});
}

void ring_rq(RxQueue& rxq) {
  store_doorbell(rxq.mrwq.db_page, hw::kRqDoorbellOffset,
                 hw::rq_doorbell(rxq.mrwq.wq_id, rxq.head_bu * hw::kBasicUnit));
}

void post_tx(TxQueue& txq, uint64_t addr, uint32_t lkey, uint32_t len) {
  hw::TxShortOob oob{};
  oob.dw0 = hw::TxShortOob::Format::set(oob.dw0, 0);
  oob.dw0 = hw::TxShortOob::VcqNumber::set(oob.dw0, txq.mcq.cq_id);
  oob.dw1 = hw::TxShortOob::VsqFrame::set(oob.dw1, hw::vsq_frame_of(txq.mqp.sq_id));
  oob.dw1 = hw::TxShortOob::VportOffset::set(oob.dw1, txq.mqp.tx_vp_offset);
  txq.head_bu += write_wqe(static_cast<uint8_t*>(txq.mqp.sq_buf), txq.mqp.sq_size, txq.head_bu,
                           &oob, sizeof(oob), hw::Sge{addr, lkey, len});
}

void ring_sq(TxQueue& txq) {
  store_doorbell(txq.mqp.db_page, hw::kSqDoorbellOffset,
                 hw::sq_doorbell(txq.mqp.sq_id, txq.head_bu * hw::kBasicUnit));
}

void arm_cq(void* db_page, uint32_t cq_id, uint32_t cq_head, uint32_t count) {
  store_doorbell(db_page, hw::kCqDoorbellOffset,
                 hw::cq_doorbell(cq_id, cq_head % (count * 8), true));
}

bool wait_cqe(void* buf, uint32_t count, uint32_t* head, void* cqe_out, int timeout_ms) {
  unsigned log2 = 0;
  while ((1u << log2) < count) ++log2;
  const auto* ring = static_cast<const hw::Cqe*>(buf);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    const hw::Cqe* cqe = &ring[*head & (count - 1)];
    // Acquire: the device writes the owner dword last, with release (cq_producer.cpp).
    const uint32_t owner_dword =
        std::atomic_ref<uint32_t>(const_cast<uint32_t&>(cqe->dw[hw::Cqe::kOwnerDword]))
            .load(std::memory_order_acquire);
    const uint32_t owner = hw::Cqe::Owner::get(owner_dword);
    if (hw::cqe_state(owner, *head, log2) == hw::CqeState::kValid) {
      memcpy(cqe_out, cqe, sizeof(hw::Cqe));
      ++*head;
      return true;
    }
    sched_yield();
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

}  // namespace mana::emu::test
