// SPDX-License-Identifier: BSD-3-Clause
// Control calls of the device model: what mana_ib checks and creates (doc/hardware.md §3.4, §6.1,
// §6.2), with the open behaviours of VfConfig::hw that differ between kernels (doc/emulator.md,
// "Open behaviours: control path").
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "device/cq_producer.h"
#include "device/device_impl.h"

namespace mana::emu {

namespace {

constexpr uint32_t kPageSize = 4096;
constexpr uint32_t kMinMtu = 68;   // ETH_MIN_MTU
constexpr uint32_t kToeplitz = 1;  // IBV_RX_HASH_FUNC_TOEPLITZ
// IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ
constexpr uint32_t kValidMrAccess = 1 | 2 | 4;
constexpr uint32_t kQueueSlotBits = 12;  // up to 4095 live queues
constexpr uint32_t kLkeySlotBits = 20;

bool page_aligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & (kPageSize - 1)) == 0; }

// SQ/RQ rings: page aligned, a power of two of at least one page (doc/hardware.md §4.1).
bool valid_ring(const void* buf, uint32_t size) {
  return buf != nullptr && page_aligned(buf) && size >= kPageSize && (size & (size - 1)) == 0;
}

template <typename Map>
auto* find_in(Map& map, uint32_t key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : it->second.get();
}

template <typename T>
void erase_value(std::vector<T*>& v, T* value) {
  std::erase(v, value);
}

}  // namespace

DeviceImpl::DeviceImpl(const VfConfig& config, std::unique_ptr<WireSet> wires, uint32_t seed)
    : config_(config),
      wires_(std::move(wires)),
      doorbells_(16),
      next_handle_(0x100 + (seed & 0xFFF)),
      mr_table_(kLkeySlotBits, 32 - kLkeySlotBits,
                std::min<uint32_t>(config.limits.max_mr, (1u << kLkeySlotBits) - 1), seed),
      queue_ids_(kQueueSlotBits, 24 - kQueueSlotBits, (1u << kQueueSlotBits) - 1, seed * 7 + 1),
      ports_(config.ports.size()) {
  const uint32_t vp_base = config.hw.vport_offset != 0 ? config.hw.vport_offset : 1 + seed % 100;
  for (uint32_t i = 0; i < ports_.size(); ++i) {
    Port& p = ports_[i];
    p.index = i;
    p.mac = config.ports[i].mac;
    p.netdev_up = config.ports[i].netdev_up;
    p.wire = wires_->endpoint(i);
    p.wire_holds_rx_frames = p.wire->holds_rx_frames();
    p.tx_ring = p.wire->direct_tx_ring();
    p.rx_ring = p.wire->direct_rx_ring();
    p.vp_offset = vp_base + i;
    p.mtu = config.limits.mtu;
    // A wire shared with the synthetic NIC brings its own cap, set when the wire was made (its
    // device thread may use it already).
    p.shared_cap = p.wire->shared_tx_cap();
    p.rate_cap.set(config.tx_pps);
  }
  // The largest frame sent: the largest MTU + Ethernet header + a tag in the data + one inserted.
  tx_frame_.resize(std::max(config.limits.mtu, config.hw.adapter_mtu) + kEthHeaderLen +
                   2 * kVlanTagLen);
  rx_frame_.resize(kRxStagingBytes);
}

DeviceImpl::~DeviceImpl() = default;

// ---- lookups

Context* DeviceImpl::find_context(uint32_t id) { return find_in(contexts_, id); }

bool DeviceImpl::disassociated(uint32_t context_id) {
  const Context* ctx = find_context(context_id);
  return ctx == nullptr || ctx->disassociated;
}

Pd* DeviceImpl::find_pd(uint32_t id, uint32_t context_id) {
  Pd* pd = find_in(pds_, id);
  return pd && pd->context_id == context_id ? pd : nullptr;
}

Cq* DeviceImpl::find_cq(uint32_t handle, uint32_t context_id) {
  Cq* cq = find_in(cqs_, handle);
  return cq && cq->context_id == context_id ? cq : nullptr;
}

Port* DeviceImpl::find_port(uint32_t ib_port) {
  return ib_port >= 1 && ib_port <= ports_.size() ? &ports_[ib_port - 1] : nullptr;
}

// ---- contexts, PDs, MRs

int DeviceImpl::open_context(volatile uint64_t* page, uint32_t* context_id) {
  std::lock_guard g(lock_);
  if (!present_) return ENODEV;
  if (page == nullptr || context_id == nullptr) return EINVAL;
  auto ctx = std::make_unique<Context>();
  ctx->id = next_handle_++;
  ctx->page = page;
  for (unsigned s = 0; s < ctx->last_sampled.size(); ++s)
    ctx->last_sampled[s] = page[kDoorbellSlots[s] / sizeof(uint64_t)];
  *context_id = ctx->id;
  context_list_.push_back(ctx.get());
  contexts_.emplace(ctx->id, std::move(ctx));
  return 0;
}

int DeviceImpl::close_context(uint32_t context_id) {
  std::lock_guard g(lock_);
  settle_doorbells();
  Context* ctx = find_context(context_id);
  if (ctx == nullptr) return EINVAL;
  if (ctx->disassociated) {  // objects not destroyed stay listed by `live`: a user-space leak
    contexts_.erase(context_id);
    return 0;
  }
  // Refused, but the verbs layer unmaps the page all the same (ibv_close_device frees the
  // context): no longer sampled, no longer written.
  erase_value(context_list_, ctx);
  if (ctx->users != 0) {
    ctx->page = nullptr;
    ctx->held = false;
    return EBUSY;
  }
  contexts_.erase(context_id);
  return 0;
}

int DeviceImpl::alloc_pd(uint32_t context_id, uint32_t* pd_id) {
  std::lock_guard g(lock_);
  Context* ctx = find_context(context_id);
  if (ctx == nullptr || pd_id == nullptr) return EINVAL;
  if (ctx->disassociated) return EIO;
  auto pd = std::make_unique<Pd>();
  pd->id = next_handle_++;
  pd->context_id = context_id;
  ++ctx->users;
  *pd_id = pd->id;
  pds_.emplace(pd->id, std::move(pd));
  return 0;
}

int DeviceImpl::dealloc_pd(uint32_t pd_id) {
  std::lock_guard g(lock_);
  Pd* pd = find_in(pds_, pd_id);
  if (pd == nullptr) return EINVAL;
  if (disassociated(pd->context_id)) {
    if (disassociate_frees_) pds_.erase(pd_id);
    return EIO;
  }
  if (pd->users != 0) return EBUSY;
  --find_context(pd->context_id)->users;
  pds_.erase(pd_id);
  return 0;
}

int DeviceImpl::reg_mr(uint32_t pd_id, uint64_t addr, uint64_t length, uint32_t access,
                       uint32_t* lkey) {
  std::lock_guard g(lock_);
  Pd* pd = find_in(pds_, pd_id);
  if (pd == nullptr || lkey == nullptr) return EINVAL;
  if (disassociated(pd->context_id)) return EIO;
  if ((access & ~kValidMrAccess) != 0) return EINVAL;
  if (length == 0 || length > config_.limits.max_mr_size || addr + length < addr) return EINVAL;
  auto mr = std::make_unique<Mr>();
  mr->pd_id = pd_id;
  mr->context_id = pd->context_id;
  mr->addr = addr;
  mr->len = length;
  mr->access = access;
  mr->lkey = mr_table_.insert(mr.get(), 0xFFFFFFFF);  // UINT32_MAX: the drivers' "no key"
  if (mr->lkey == 0) return ENOMEM;
  ++pd->users;
  *lkey = mr->lkey;
  mrs_.emplace(mr->lkey, std::move(mr));
  return 0;
}

int DeviceImpl::dereg_mr(uint32_t lkey) {
  std::lock_guard g(lock_);
  Mr* mr = find_in(mrs_, lkey);
  if (mr == nullptr) return EINVAL;
  const bool gone = disassociated(mr->context_id);
  if (gone && !disassociate_frees_) return EIO;
  if (!gone) --find_in(pds_, mr->pd_id)->users;
  mr_cache_ = MrCache{};
  mr_table_.erase(lkey);
  mrs_.erase(lkey);
  return gone ? EIO : 0;
}

// ---- CQs and WQs

int DeviceImpl::create_cq(uint32_t context_id, void* buf, uint32_t count, CqEventFd event_fd,
                          uint32_t* cq_handle) {
  std::lock_guard g(lock_);
  Context* ctx = find_context(context_id);
  if (ctx == nullptr || cq_handle == nullptr) return EINVAL;
  if (ctx->disassociated) return EIO;
  if (count == 0 || count > config_.limits.max_cqe) return EINVAL;
  if (buf == nullptr || !page_aligned(buf)) return EINVAL;
  auto cq = std::make_unique<Cq>();
  cq->handle = next_handle_++;
  cq->context_id = context_id;
  cq->ring = static_cast<hw::Cqe*>(buf);
  cq->count = count;
  // Without an EQ (cq-eq=off, 6.2-era mana_ib: GDMA_CQ_NO_EQ) an armed CQ never interrupts.
  cq->event_fd = config_.hw.cq_eq ? event_fd : -1;
  // Polled doorbells: the RX and TX CQs of a context store to the one CQ doorbell slot, so the
  // sampler misses some of their doorbells and the rule would stall a CQ the driver did ring
  // (doc/emulator.md, "Limits"). The rule needs every doorbell: trap mode only.
  cq->doorbell_rule = poll_doorbells_.load(std::memory_order_relaxed)
                          ? HwBehaviour::CqDoorbellRule::kOff
                          : config_.hw.cq_doorbell;
  cq_reset(*cq);
  ++ctx->users;
  *cq_handle = cq->handle;
  cqs_.emplace(cq->handle, std::move(cq));
  return 0;
}

int DeviceImpl::destroy_cq(uint32_t cq_handle) {
  std::lock_guard g(lock_);
  settle_doorbells();
  Cq* cq = find_in(cqs_, cq_handle);
  if (cq == nullptr) return EINVAL;
  if (disassociated(cq->context_id)) {
    if (disassociate_frees_) cqs_.erase(cq_handle);
    return EIO;
  }
  if (cq->users != 0) return EBUSY;
  --find_context(cq->context_id)->users;
  cqs_.erase(cq_handle);
  return 0;
}

int DeviceImpl::create_wq(uint32_t context_id, uint32_t pd_id, void* buf, uint32_t size_bytes,
                          uint32_t max_wr, uint32_t max_sge, uint32_t cq_handle,
                          uint32_t* wq_handle) {
  std::lock_guard g(lock_);
  Context* ctx = find_context(context_id);
  Pd* pd = find_pd(pd_id, context_id);
  Cq* cq = find_cq(cq_handle, context_id);
  if (ctx == nullptr || pd == nullptr || cq == nullptr || wq_handle == nullptr) return EINVAL;
  if (ctx->disassociated) return EIO;
  if (max_wr == 0 || max_wr > config_.limits.max_qp_wr) return EINVAL;
  if (max_sge > config_.limits.max_recv_sge) return EINVAL;
  if (!valid_ring(buf, size_bytes)) return EINVAL;
  if (cq->users != 0) return EINVAL;  // a CQ completes exactly one queue (doc/hardware.md §4.6)
  auto rq = std::make_unique<Rq>();
  rq->handle = next_handle_++;
  rq->context_id = context_id;
  rq->pd_id = pd_id;
  rq->ring = static_cast<uint8_t*>(buf);
  rq->size = size_bytes;
  rq->cq = cq;
  ++cq->users;
  ++pd->users;
  ++ctx->users;
  *wq_handle = rq->handle;
  wqs_.emplace(rq->handle, std::move(rq));
  return 0;
}

int DeviceImpl::destroy_wq(uint32_t wq_handle) {
  std::lock_guard g(lock_);
  settle_doorbells();
  Rq* rq = find_in(wqs_, wq_handle);
  if (rq == nullptr) return EINVAL;
  if (disassociated(rq->context_id)) {
    if (disassociate_frees_) wqs_.erase(wq_handle);
    return EIO;
  }
  if (rq->rss != nullptr) return EBUSY;
  --rq->cq->users;
  --find_in(pds_, rq->pd_id)->users;
  --find_context(rq->context_id)->users;
  wqs_.erase(wq_handle);
  return 0;
}

// ---- queue ids and vPorts

bool DeviceImpl::bind_queue(QueueBase& q) {
  q.id = queue_ids_.insert(&q);
  return q.id != 0;
}

void DeviceImpl::unbind_queue(QueueBase& q) {
  if (q.id != 0) queue_ids_.erase(q.id);
  q.id = 0;
}

// The vPort of a port has one owner PD; its QPs share it (doc/hardware.md §6.2). A busy vPort fails
// with ENODEV (mana_ib before 2026 maps every error of mana_cfg_vport to it) or EBUSY (vport-busy).
int DeviceImpl::acquire_vport(Port& port, uint32_t pd_id) {
  if (port.netdev_up) return config_.hw.vport_busy_errno;
  if (port.vport_users != 0 && port.vport_pd != pd_id) return config_.hw.vport_busy_errno;
  if (port.vport_users == 0) follow_netdev_mtu(port);
  port.vport_pd = pd_id;
  ++port.vport_users;
  return 0;
}

// The vPort takes its netdev's MTU when it is configured (doc/emulator.md "MTU"). The kernel
// refuses an MTU above the adapter's; a file that says more (written by hand) is ignored, loudly.
void DeviceImpl::follow_netdev_mtu(Port& port) {
  if (config_.hw.vport_mtu_adapter) {  // hw vport-mtu=adapter: the netdev's MTU is not the NIC's
    std::atomic_ref<uint32_t>(port.mtu).store(config_.hw.adapter_mtu, std::memory_order_relaxed);
    return;
  }
  const std::string& path = config_.ports[port.index].mtu_file;
  if (path.empty()) return;
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return;
  unsigned mtu = 0;
  const bool read = std::fscanf(f, "%u", &mtu) == 1;
  std::fclose(f);
  if (!read) return;
  if (mtu < kMinMtu || mtu > config_.hw.adapter_mtu) {
    std::fprintf(stderr, "mana-emu: %s says %u, outside %u..%u (hw adapter-mtu): MTU stays %u\n",
                 path.c_str(), mtu, kMinMtu, config_.hw.adapter_mtu, port.mtu);
    return;
  }
  std::atomic_ref<uint32_t>(port.mtu).store(mtu, std::memory_order_relaxed);
}

bool DeviceImpl::vport_configured_for(const Port& port, uint32_t pd_id) const {
  return port.vport_users != 0 && port.vport_pd == pd_id;
}

void DeviceImpl::release_vport(Port& port) {
  if (--port.vport_users == 0) port.vport_pd = 0;
}

// Poll mode sees only the last store of each doorbell slot, so it is exact only with one writer per
// slot (doc/emulator.md): one SQ and one RQ per context. Trap mode has no such limit.
bool DeviceImpl::poll_mode_allows(const Context& ctx, uint32_t new_sqs, uint32_t new_rqs) const {
  if (!poll_doorbells_.load(std::memory_order_relaxed) || shared_doorbell_slots_) return true;
  if (ctx.sqs + new_sqs <= 1 && ctx.rqs + new_rqs <= 1) return true;
  std::fprintf(
      stderr,
      "mana-emu: context %u would have %u SQs and %u RQs sharing its doorbell page; polled "
      "doorbells allow one of each per context (use trapped doorbells, or one queue per "
      "port)\n",
      ctx.id, ctx.sqs + new_sqs, ctx.rqs + new_rqs);
  return false;
}

// ---- QPs

int DeviceImpl::create_raw_qp(uint32_t context_id, uint32_t pd_id, uint32_t port_num, void* sq_buf,
                              uint32_t sq_size_bytes, uint32_t max_send_wr, uint32_t max_send_sge,
                              uint32_t cq_handle, SqBinding* out, uint32_t* qp_handle) {
  std::lock_guard g(lock_);
  Context* ctx = find_context(context_id);
  Pd* pd = find_pd(pd_id, context_id);
  Cq* cq = find_cq(cq_handle, context_id);
  Port* port = find_port(port_num);
  if (ctx == nullptr || pd == nullptr || cq == nullptr || port == nullptr) return EINVAL;
  if (ctx->disassociated) return EIO;
  if (out == nullptr || qp_handle == nullptr) return EINVAL;
  if (max_send_wr == 0 || max_send_wr > config_.limits.max_qp_wr) return EINVAL;
  if (max_send_sge > config_.limits.max_send_sge) return EINVAL;
  if (!valid_ring(sq_buf, sq_size_bytes)) return EINVAL;
  if (cq->users != 0) return EINVAL;
  if (!poll_mode_allows(*ctx, 1, 0)) return EBUSY;
  if (int err = acquire_vport(*port, pd_id)) return err;

  auto sq = std::make_unique<Sq>();
  sq->context_id = context_id;
  sq->pd_id = pd_id;
  sq->ring = static_cast<uint8_t*>(sq_buf);
  sq->size = sq_size_bytes;
  sq->cq = cq;
  sq->port = port;
  // hw rx-steering-on-destroy=keep: the new TX CQ may take an id stale steering still names.
  const bool cq_bound = config_.hw.rx_steering_keep && bind_cq_to_stale_id(*port, *cq);
  if (!bind_queue(*sq) || (!cq_bound && !bind_queue(*cq))) {
    unbind_queue(*cq);
    unbind_queue(*sq);
    release_vport(*port);
    return ENOMEM;
  }
  cq_reset(*cq);
  ++cq->users;
  ++pd->users;
  ++ctx->users;
  sq->qp_handle = next_handle_++;
  *out = {sq->id, cq->id, port->vp_offset};
  *qp_handle = sq->qp_handle;
  sqs_.push_back(sq.get());
  port->sqs.push_back(sq.get());
  ++ctx->sqs;
  qps_[sq->qp_handle].sq = std::move(sq);
  return 0;
}

int DeviceImpl::create_rss_qp(uint32_t context_id, uint32_t pd_id, uint32_t port_num,
                              const uint32_t* wq_handles, unsigned log_size, uint8_t hash_function,
                              const uint8_t* key, uint32_t key_len, RqBinding* out,
                              uint32_t* qp_handle) {
  std::lock_guard g(lock_);
  Context* ctx = find_context(context_id);
  Pd* pd = find_pd(pd_id, context_id);
  Port* port = find_port(port_num);
  if (ctx == nullptr || pd == nullptr || port == nullptr) return EINVAL;
  if (ctx->disassociated) return EIO;
  if (wq_handles == nullptr || out == nullptr || qp_handle == nullptr) return EINVAL;
  if ((1u << log_size) > hw::kRssTableSize || log_size > 31) return EINVAL;
  if (hash_function != kToeplitz || key == nullptr || key_len != hw::kRssKeySize) return EINVAL;
  const uint32_t n = 1u << log_size;
  std::vector<Rq*> table(n);
  for (uint32_t i = 0; i < n; ++i) {
    Rq* rq = find_in(wqs_, wq_handles[i]);
    if (rq == nullptr || rq->context_id != context_id) return EINVAL;
    if (rq->rss != nullptr) return EBUSY;
    if (rq->region_taken) return EINVAL;
    table[i] = rq;
  }
  if (port->rss != nullptr) return EBUSY;  // one steering configuration per vPort
  // raw-qp-first: only a raw QP configures the vPort; the RSS QP just takes a reference.
  if (config_.hw.raw_qp_first && !vport_configured_for(*port, pd_id)) return EINVAL;
  uint32_t distinct = 0;
  for (uint32_t i = 0; i < n; ++i)
    distinct += std::find(table.begin(), table.begin() + i, table[i]) == table.begin() + i;
  if (!poll_mode_allows(*ctx, 0, distinct)) return EBUSY;
  if (int err = acquire_vport(*port, pd_id)) return err;

  auto rss = std::make_unique<RssQp>();
  rss->handle = next_handle_++;
  rss->port = port;
  rss->pd_id = pd_id;
  rss->context_id = context_id;
  rss->hasher = std::make_unique<RssHasher>(key);
  rss->hashes = n > 1 || config_.hw.single_queue_hash;
  for (Rq* rq : table) {
    if (rq->rss != nullptr) continue;  // listed twice
    rq->rss = rss.get();
    rq->region_taken = true;
    rss->rqs.push_back(rq);
  }
  for (Rq* rq : rss->rqs) {
    rq->port = port;
    rq->consumed_bu = rq->tail_bu = 0;
    rq->coalesced_count = 0;
    rq->dead = false;
    if (!bind_queue(*rq) || !bind_queue(*rq->cq)) {
      destroy_rss_qp(*rss);
      return ENOMEM;
    }
    cq_reset(*rq->cq);
  }
  for (uint32_t i = 0; i < hw::kRssTableSize; ++i) port->steering[i] = table[i & (n - 1)];
  port->default_rq = table[n - 1];
  drop_unsteered_frames(*port);  // or routed by the stale steering, which ends here
  end_stale_steering(*port);
  port->rss = rss.get();
  ctx->rqs += static_cast<uint32_t>(rss->rqs.size());
  for (uint32_t i = 0; i < n; ++i) out[i] = {table[i]->cq->id, table[i]->id};
  ++pd->users;
  ++ctx->users;
  *qp_handle = rss->handle;
  qps_[rss->handle].rss = std::move(rss);
  return 0;
}

void DeviceImpl::destroy_raw_qp(Sq& sq) {
  unbind_queue(*sq.cq);
  unbind_queue(sq);
  --sq.cq->users;
  erase_value(sqs_, &sq);
  erase_value(sq.port->sqs, &sq);
  --find_context(sq.context_id)->sqs;
  release_vport(*sq.port);
}

// Also the unwinding of a failed create_rss_qp (then the port's steering is not programmed yet).
void DeviceImpl::destroy_rss_qp(RssQp& rss) {
  Port& port = *rss.port;
  // hw rx-steering-on-destroy=keep: kernels without the fix leave the steering behind (the ids
  // are read before the queues let go of them).
  if (port.rss == &rss && config_.hw.rx_steering_keep) keep_stale_steering(port, rss);
  for (Rq* rq : rss.rqs) {
    if (rq->id != 0 && !rq->dead) flush_coalesced(*rq);
    unbind_queue(*rq->cq);
    unbind_queue(*rq);
    rq->rss = nullptr;
    rq->port = nullptr;
  }
  if (port.rss == &rss) {
    find_context(rss.context_id)->rqs -= static_cast<uint32_t>(rss.rqs.size());
    port.rss = nullptr;
    port.steering.fill(nullptr);
    port.default_rq = nullptr;
  }
  release_vport(port);
}

int DeviceImpl::destroy_qp(uint32_t qp_handle) {
  std::lock_guard g(lock_);
  settle_doorbells();
  auto it = qps_.find(qp_handle);
  if (it == qps_.end()) return EINVAL;
  if (it->second.released) {
    if (disassociate_frees_) qps_.erase(it);
    return EIO;
  }
  uint32_t pd_id, context_id;
  if (it->second.sq) {
    pd_id = it->second.sq->pd_id;
    context_id = it->second.sq->context_id;
    send_posted_wqes(*it->second.sq);
    destroy_raw_qp(*it->second.sq);
  } else {
    pd_id = it->second.rss->pd_id;
    context_id = it->second.rss->context_id;
    destroy_rss_qp(*it->second.rss);
  }
  --find_in(pds_, pd_id)->users;
  --find_context(context_id)->users;
  qps_.erase(it);
  return 0;
}

// ---- control channel

void DeviceImpl::set_netdev_up(uint32_t port, bool up) {
  std::lock_guard g(lock_);
  if (port >= ports_.size()) return;
  ports_[port].netdev_up = up;
  // The kernel's mana_open programs its own steering (doc/hardware.md §9.22).
  if (up) end_stale_steering(ports_[port]);
}

bool DeviceImpl::netdev_up(uint32_t port) const {
  std::lock_guard g(lock_);
  return port < ports_.size() && ports_[port].netdev_up;
}

void DeviceImpl::inject(const Fault& fault) {
  std::lock_guard g(lock_);
  if (fault.port >= ports_.size()) return;
  PortFaults& f = ports_[fault.port].faults;
  if (fault.kind == Fault::Kind::kStall) {
    for (Sq* sq : sqs_)
      if (sq->port == &ports_[fault.port]) sq->stalled = true;
  } else if (fault.kind == Fault::Kind::kErrorCqe) {
    FaultPlan& plan = fault.tx ? f.tx_error : f.rx_error;
    plan.remaining = fault.count;
    plan.cqe_type = fault.cqe_type;
    plan.skip = fault.skip;
    plan.every = fault.every != 0 ? fault.every : 1;
  } else {
    (fault.tx ? f.tx_bad_lkey_count : f.rx_bad_lkey_count) = fault.count;
  }
}

void DeviceImpl::set_present(bool present) {
  std::lock_guard g(lock_);
  if (!present) {
    for (auto& [h, cq] : cqs_) cq->dead = true;
    for (auto& [h, rq] : wqs_) rq->dead = true;
    for (Sq* sq : sqs_) sq->dead = true;
    disassociate_all();
    for (Port& p : ports_) end_stale_steering(p);  // the removed VF's vPorts are gone
  }
  present_ = present;
}

// What the uverbs core does when a device goes away under open contexts (ib_uverbs_remove_one ->
// uverbs_destroy_ufile_hw): the hardware objects are freed at once, the user's handles stay
// until the user destroys them (doc/hardware.md §2.7). A re-added VF starts with a free vPort.
void DeviceImpl::disassociate_all() {
  for (auto& [h, qp] : qps_) {
    if (qp.released) continue;
    if (qp.sq)
      destroy_raw_qp(*qp.sq);
    else
      destroy_rss_qp(*qp.rss);
    qp.released = true;
  }
  for (auto& [id, ctx] : contexts_) ctx->disassociated = true;
  context_list_.clear();
}

bool DeviceImpl::present() const { return present_; }

void DeviceImpl::set_poll_doorbells(bool on) { poll_doorbells_ = on; }

void DeviceImpl::set_shared_doorbell_slots(bool on) {
  std::lock_guard g(lock_);
  shared_doorbell_slots_ = on;
}

bool DeviceImpl::context_disassociated(uint32_t context_id) {
  std::lock_guard g(lock_);
  return disassociated(context_id);
}

void DeviceImpl::set_disassociate_destroy(bool frees) {
  std::lock_guard g(lock_);
  disassociate_frees_ = frees;
}

QueueCounters DeviceImpl::sq_counters(uint32_t sq_id) const {
  std::lock_guard g(lock_);
  const QueueBase* q = queue_ids_.find(sq_id);
  return q && q->kind == QueueKind::kSq ? static_cast<const Sq*>(q)->counters : QueueCounters{};
}

QueueCounters DeviceImpl::rq_counters(uint32_t rq_id) const {
  std::lock_guard g(lock_);
  const QueueBase* q = queue_ids_.find(rq_id);
  return q && q->kind == QueueKind::kRq ? static_cast<const Rq*>(q)->counters : QueueCounters{};
}

PortCounters DeviceImpl::port_counters(uint32_t port) const {
  std::lock_guard g(lock_);
  return port < ports_.size() ? ports_[port].counters : PortCounters{};
}

LiveObjects DeviceImpl::live_objects() const {
  std::lock_guard g(lock_);
  LiveObjects l;
  l.contexts = static_cast<uint32_t>(contexts_.size());
  l.pds = static_cast<uint32_t>(pds_.size());
  l.mrs = static_cast<uint32_t>(mrs_.size());
  l.cqs = static_cast<uint32_t>(cqs_.size());
  l.wqs = static_cast<uint32_t>(wqs_.size());
  for (const auto& [h, qp] : qps_) (qp.sq ? l.sqs : l.rss_qps) += 1;
  return l;
}

uint64_t DeviceImpl::bad_doorbells() const {
  std::lock_guard g(lock_);
  return bad_doorbells_;
}

}  // namespace mana::emu
