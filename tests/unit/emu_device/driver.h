// SPDX-License-Identifier: BSD-3-Clause
// A minimal driver for device tests: it owns rings in plain page-aligned memory, writes WQEs in the
// hardware format (doc/hardware.md §4.2-§4.4), rings doorbells through Device::ring and consumes
// CQEs with the owner-bit protocol of doc/hardware.md §4.5 (for any CQ size).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device/device.h"
#include "mana/gdma_format.h"
#include "test_wire.h"

namespace mana::emu::test {

// Zeroed memory aligned to a page.
class PageBuffer {
 public:
  explicit PageBuffer(size_t bytes);
  ~PageBuffer();
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  uint8_t* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  uint8_t* p_;
  size_t n_;
};

inline constexpr uint32_t kIbvLocalWrite = 1;

// `ports` loop-free test ports; every open behaviour at its default except raw-qp-first (off).
VfConfig test_config(unsigned ports, bool coalescing = false);
inline std::array<uint8_t, 6> port_mac(unsigned port) {
  return {0x00, 0x15, 0x5d, 0x10, 0x20, static_cast<uint8_t>(0x30 + port)};
}

// Consumer side of a CQ.
class CqRing {
 public:
  explicit CqRing(uint32_t count);
  // The next valid CQE, or null when none; an overflow fails the test.
  const hw::Cqe* next();
  // The 31-bit consumer index for an arming CQ doorbell (doc/hardware.md §2.7, §4.8).
  uint32_t arm_index() const { return head_ % (count_ * 8); }
  uint32_t count() const { return count_; }
  void* buffer() const { return mem_.data(); }
  uint32_t handle = 0;
  uint32_t id = 0;

 private:
  PageBuffer mem_;
  uint32_t count_;
  uint32_t head_;
};

// A driver context: device, doorbell page, PD and one registered arena for packet buffers.
class Driver {
 public:
  // `real_wires`: the wires named in the config (make_wires) instead of test wires.
  explicit Driver(const VfConfig& config, size_t arena_bytes = 4 << 20, bool real_wires = false);
  Device& dev() { return *dev_; }
  TestWire& wire(unsigned port) { return *wires_->wires[port]; }  // test wires only
  uint32_t ctx = 0, pd = 0, lkey = 0;
  PageBuffer page{4096};
  // A fresh context, PD and arena MR (what a driver opens when the VF is back after a removal).
  void reopen();
  // Bump allocation in the registered arena (64-byte aligned); reset() starts over.
  uint8_t* alloc(uint32_t bytes);
  void reset_arena() { arena_used_ = 0; }
  uint8_t* arena() const { return arena_.data(); }
  size_t arena_size() const { return arena_.size(); }
  // Polls the device until `pred` holds or `max_polls` passes were made.
  template <typename Pred>
  bool poll_until(Pred pred, unsigned max_polls = 64) {
    for (unsigned i = 0; i < max_polls; ++i) {
      if (pred()) return true;
      dev_->poll();
    }
    return pred();
  }

 private:
  TestWireSet* wires_;
  std::unique_ptr<Device> dev_;
  PageBuffer arena_;
  size_t arena_used_ = 0;
};

// Raw QP: an SQ and its CQ.
struct TxOptions {
  bool suppress = false;
  bool ipv4 = false, ipv6 = false, ip_csum = false, tcp_csum = false, udp_csum = false;
  uint32_t transport_offset = 0;
  bool long_oob = false;
  bool inject_vlan = false;
  uint16_t tci = 0;  // PCP/DEI/VID
  // TSO (doc/hardware.md §4.11): the MSS in client_data_unit and the first `tso_header` bytes
  // alone in SGE 0 (the rest in SGE 1), last_vbytes and client_oob_in_sgl as the kernel sets them.
  uint32_t tso_mss = 0;
  uint32_t tso_header = 0;
};

class TxQueue {
 public:
  TxQueue(Driver& d, uint32_t port, uint32_t sq_bytes = 4096, uint32_t cq_count = 64,
          int event_fd = -1);
  int status = 0;  // create_raw_qp's result
  SqBinding binding{};
  uint32_t qp = 0;
  CqRing cq;
  // The OOB a correct driver writes for these options.
  hw::TxOob oob(const TxOptions& o) const;
  // Writes one WQE (header, `oob_bytes` of `oob`, SGL) at head, wrapping the SGL; returns its BU
  // position. `num_sge_field` overrides the header's SGE count (for malformed WQEs).
  uint32_t post(const hw::TxOob& oob, uint32_t oob_bytes, const std::vector<hw::Sge>& sges,
                int num_sge_field = -1);
  // Copies `frame` into the arena and posts it as `segments` SGEs.
  uint32_t post_frame(const std::vector<uint8_t>& frame, const TxOptions& o = {},
                      unsigned segments = 1);
  void doorbell();
  uint32_t head_bu = 0;
  uint32_t size_bu() const { return ring_size_ / hw::kBasicUnit; }

 private:
  Driver& d_;
  PageBuffer ring_;
  uint32_t ring_size_;
};

// RX side: WQs with their CQs, grouped by an RSS QP.
struct RxQueue {
  RxQueue(Driver& d, uint32_t ring_bytes, uint32_t cq_count, int event_fd = -1);
  CqRing cq;
  PageBuffer ring;
  uint32_t wq = 0;
  uint32_t id = 0;
  uint32_t head_bu = 0;
  std::vector<uint8_t*> posted;  // buffers in posting order
  uint32_t size_bu() const { return static_cast<uint32_t>(ring.size() / hw::kBasicUnit); }
};

class RxSet {
 public:
  // `n` queues (power of two) on IB port `port` with `key` (40 bytes; null: the default key).
  RxSet(Driver& d, uint32_t port, unsigned n, const uint8_t* key = nullptr,
        uint32_t ring_bytes = 4096, uint32_t cq_count = 64, int event_fd = -1);
  int status = 0;
  uint32_t qp = 0;
  std::vector<std::unique_ptr<RxQueue>> queues;
  // Posts `count` one-SGE WQEs of `buf_bytes` each on queue `q` (lkey: the arena's unless given).
  void post(unsigned q, unsigned count, uint32_t buf_bytes = 2048, uint32_t lkey = 0);
  // Posts a WQE with an explicit SGL (num_sge 0: the dummy SGE rule).
  void post_sgl(unsigned q, const std::vector<hw::Sge>& sges, uint8_t* first_buffer);
  void doorbell(unsigned q, uint32_t wqe_cnt = 0);

 private:
  Driver& d_;
};

}  // namespace mana::emu::test
