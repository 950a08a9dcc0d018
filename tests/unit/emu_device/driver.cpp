// SPDX-License-Identifier: BSD-3-Clause
#include "driver.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "mana/toeplitz.h"

namespace mana::emu::test {

namespace {

size_t round_to_page(size_t n) { return (n + 4095) & ~size_t{4095}; }

// Writes `bytes` into a ring at byte offset `pos`, wrapping at its end.
void write_wrapped(uint8_t* ring, uint32_t ring_size, uint32_t pos, const uint8_t* bytes,
                   uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) ring[(pos + i) % ring_size] = bytes[i];
}

// One WQE as bytes: header, OOB, SGL (at least the dummy SGE), padded to BUs.
std::vector<uint8_t> wqe_bytes(uint32_t num_sge_field, const void* oob, uint32_t oob_bytes,
                               const std::vector<hw::Sge>& sges) {
  const uint32_t sgl = static_cast<uint32_t>(sges.empty() ? 1 : sges.size());
  const uint32_t size = hw::align_up(hw::kDmaOobSize + oob_bytes + hw::kSgeSize * sgl, 32);
  std::vector<uint8_t> b(size, 0);
  const hw::WqeHeader h = hw::WqeHeader::make(num_sge_field, oob_bytes);
  std::memcpy(&b[0], &h, sizeof(h));
  std::memcpy(&b[8], oob, oob_bytes);
  if (sges.empty())
    std::memcpy(&b[8 + oob_bytes], &hw::kDummySge, sizeof(hw::Sge));
  else
    std::memcpy(&b[8 + oob_bytes], sges.data(), sges.size() * sizeof(hw::Sge));
  return b;
}

}  // namespace

PageBuffer::PageBuffer(size_t bytes) : n_(round_to_page(bytes)) {
  p_ = static_cast<uint8_t*>(std::aligned_alloc(4096, n_));
  std::memset(p_, 0, n_);
}
PageBuffer::~PageBuffer() { std::free(p_); }

VfConfig test_config(unsigned ports, bool coalescing) {
  VfConfig c;
  for (unsigned i = 0; i < ports; ++i) {
    PortConfig p;
    p.mac = port_mac(i);
    p.ifname = "eth" + std::to_string(i + 1);
    c.ports.push_back(p);
  }
  c.rx_coalescing = coalescing;
  // The data-path tests bind RX queues without a raw QP first; control_hw_test.cpp covers the rule.
  c.hw.raw_qp_first = false;
  return c;
}

CqRing::CqRing(uint32_t count) : mem_(count * hw::kCqeSize), count_(count), head_(count) {}

const hw::Cqe* CqRing::next() {
  const auto* ring = static_cast<const hw::Cqe*>(buffer());
  const hw::Cqe& c = ring[head_ % count_];
  const uint32_t owner = c.owner();
  const uint32_t fresh = (head_ / count_) & hw::kOwnerMask;
  if (owner == ((fresh - 1) & hw::kOwnerMask)) return nullptr;
  EXPECT_EQ(owner, fresh) << "CQ overflow at consumer index " << head_;
  if (owner != fresh) return nullptr;
  ++head_;
  return &c;
}

Driver::Driver(const VfConfig& config, size_t arena_bytes, bool real_wires) : arena_(arena_bytes) {
  if (real_wires) {
    wires_ = nullptr;
    dev_ = Device::create(config);
  } else {
    auto wires = std::make_unique<TestWireSet>(static_cast<unsigned>(config.ports.size()));
    wires_ = wires.get();
    dev_ = Device::create(config, std::move(wires));
  }
  EXPECT_NE(dev_, nullptr);
  reopen();
}

void Driver::reopen() {
  EXPECT_EQ(dev_->open_context(reinterpret_cast<volatile uint64_t*>(page.data()), &ctx), 0);
  EXPECT_EQ(dev_->alloc_pd(ctx, &pd), 0);
  EXPECT_EQ(dev_->reg_mr(pd, reinterpret_cast<uint64_t>(arena_.data()), arena_.size(),
                         kIbvLocalWrite, &lkey),
            0);
}

uint8_t* Driver::alloc(uint32_t bytes) {
  const size_t at = arena_used_;
  arena_used_ = (arena_used_ + bytes + 63) & ~size_t{63};
  EXPECT_LE(arena_used_, arena_.size()) << "test arena exhausted";
  if (arena_used_ > arena_.size()) arena_used_ = 0;
  return arena_.data() + at;
}

// ---- TX

TxQueue::TxQueue(Driver& d, uint32_t port, uint32_t sq_bytes, uint32_t cq_count, int event_fd)
    : cq(cq_count), d_(d), ring_(sq_bytes), ring_size_(sq_bytes) {
  EXPECT_EQ(d.dev().create_cq(d.ctx, cq.buffer(), cq_count, event_fd, &cq.handle), 0);
  status = d.dev().create_raw_qp(d.ctx, d.pd, port, ring_.data(), sq_bytes, 256, 30, cq.handle,
                                 &binding, &qp);
  cq.id = binding.cq_id;
}

hw::TxOob TxQueue::oob(const TxOptions& o) const {
  using S = hw::TxShortOob;
  using L = hw::TxLongOob;
  hw::TxOob x{};
  uint32_t dw0 = S::Format::set(0, o.long_oob ? 1 : 0);
  dw0 = S::IsIpv4::set(dw0, o.ipv4);
  dw0 = S::IsIpv6::set(dw0, o.ipv6);
  dw0 = S::IpCsum::set(dw0, o.ip_csum);
  dw0 = S::TcpCsum::set(dw0, o.tcp_csum);
  dw0 = S::UdpCsum::set(dw0, o.udp_csum);
  dw0 = S::SuppressCqe::set(dw0, o.suppress);
  x.s.dw0 = S::VcqNumber::set(dw0, binding.cq_id);
  uint32_t dw1 = S::TransportOffset::set(0, o.transport_offset);
  dw1 = S::VsqFrame::set(dw1, hw::vsq_frame_of(binding.sq_id));
  x.s.dw1 = S::VportOffset::set(dw1, binding.tx_vp_offset);
  if (o.inject_vlan) {
    uint32_t dw2 = L::InjectVlan::set(0, 1);
    dw2 = L::Pcp::set(dw2, o.tci >> 13);
    dw2 = L::Dei::set(dw2, (o.tci >> 12) & 1);
    x.l.dw2 = L::Vid::set(dw2, o.tci & 0xFFF);
  }
  return x;
}

uint32_t TxQueue::post(const hw::TxOob& oob, uint32_t oob_bytes, const std::vector<hw::Sge>& sges,
                       int num_sge_field) {
  const uint32_t n = num_sge_field >= 0 ? static_cast<uint32_t>(num_sge_field)
                                        : static_cast<uint32_t>(sges.size());
  const std::vector<uint8_t> b = wqe_bytes(n, &oob, oob_bytes, sges);
  const uint32_t at = head_bu;
  write_wrapped(ring_.data(), ring_size_, (head_bu * hw::kBasicUnit) % ring_size_, b.data(),
                static_cast<uint32_t>(b.size()));
  head_bu += static_cast<uint32_t>(b.size()) / hw::kBasicUnit;
  return at;
}

uint32_t TxQueue::post_frame(const std::vector<uint8_t>& frame, const TxOptions& o,
                             unsigned segments) {
  std::vector<hw::Sge> sges;
  const uint32_t len = static_cast<uint32_t>(frame.size());
  uint32_t done = 0;
  if (o.tso_mss != 0) segments = 2;
  for (unsigned s = 0; s < segments; ++s) {
    uint32_t chunk = s + 1 == segments ? len - done : len / segments;
    if (o.tso_mss != 0 && s == 0) chunk = o.tso_header;
    uint8_t* buf = d_.alloc(chunk ? chunk : 1);
    std::memcpy(buf, frame.data() + done, chunk);
    sges.push_back({reinterpret_cast<uint64_t>(buf), d_.lkey, chunk});
    done += chunk;
  }
  const uint32_t oob_bytes = o.long_oob ? hw::kLongOobSize : hw::kShortOobSize;
  const uint32_t at = post(oob(o), oob_bytes, sges);
  if (o.tso_mss != 0) {
    const hw::WqeHeader h = hw::WqeHeader::make_tso(static_cast<uint32_t>(sges.size()), oob_bytes,
                                                    o.tso_header, o.tso_mss);
    std::memcpy(ring_.data() + (at * hw::kBasicUnit) % ring_size_, &h, sizeof(h));
  }
  return at;
}

void TxQueue::doorbell() {
  d_.dev().ring(d_.ctx, hw::kSqDoorbellOffset,
                hw::sq_doorbell(binding.sq_id, head_bu * hw::kBasicUnit));
}

// ---- RX

RxQueue::RxQueue(Driver& d, uint32_t ring_bytes, uint32_t cq_count, int event_fd)
    : cq(cq_count), ring(ring_bytes) {
  EXPECT_EQ(d.dev().create_cq(d.ctx, cq.buffer(), cq_count, event_fd, &cq.handle), 0);
  EXPECT_EQ(d.dev().create_wq(d.ctx, d.pd, ring.data(), ring_bytes, 256, 1, cq.handle, &wq), 0);
}

RxSet::RxSet(Driver& d, uint32_t port, unsigned n, const uint8_t* key, uint32_t ring_bytes,
             uint32_t cq_count, int event_fd)
    : d_(d) {
  std::vector<uint32_t> wqs;
  for (unsigned i = 0; i < n; ++i) {
    queues.push_back(std::make_unique<RxQueue>(d, ring_bytes, cq_count, event_fd));
    wqs.push_back(queues.back()->wq);
  }
  unsigned log = 0;
  while ((1u << log) < n) ++log;
  std::vector<RqBinding> out(n);
  status = d.dev().create_rss_qp(d.ctx, d.pd, port, wqs.data(), log, 1, key ? key : kDefaultRssKey,
                                 40, out.data(), &qp);
  for (unsigned i = 0; i < n && status == 0; ++i) {
    queues[i]->id = out[i].wq_id;
    queues[i]->cq.id = out[i].cq_id;
  }
}

void RxSet::post_sgl(unsigned q, const std::vector<hw::Sge>& sges, uint8_t* first_buffer) {
  RxQueue& r = *queues[q];
  const uint8_t oob[8] = {};
  const std::vector<uint8_t> b =
      wqe_bytes(static_cast<uint32_t>(sges.size()), oob, sizeof(oob), sges);
  const uint32_t size = static_cast<uint32_t>(r.ring.size());
  write_wrapped(r.ring.data(), size, (r.head_bu * hw::kBasicUnit) % size, b.data(),
                static_cast<uint32_t>(b.size()));
  r.head_bu += static_cast<uint32_t>(b.size()) / hw::kBasicUnit;
  r.posted.push_back(first_buffer);
}

void RxSet::post(unsigned q, unsigned count, uint32_t buf_bytes, uint32_t lkey) {
  for (unsigned i = 0; i < count; ++i) {
    uint8_t* buf = d_.alloc(buf_bytes);
    post_sgl(q, {{reinterpret_cast<uint64_t>(buf), lkey ? lkey : d_.lkey, buf_bytes}}, buf);
  }
}

void RxSet::doorbell(unsigned q, uint32_t wqe_cnt) {
  RxQueue& r = *queues[q];
  d_.dev().ring(d_.ctx, hw::kRqDoorbellOffset,
                hw::rq_doorbell(r.id, r.head_bu * hw::kBasicUnit, wqe_cnt));
}

}  // namespace mana::emu::test
