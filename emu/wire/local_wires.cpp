// SPDX-License-Identifier: BSD-3-Clause
// loop, pair and null wires: in-process frame rings, used only by the device thread.
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "wire/endpoints.h"
#include "wire/frame_ring.h"

namespace mana::emu {
namespace {

// Zeroed, page-aligned memory for one ring; transparent huge pages keep the slots' TLB footprint
// small when a flood of small frames walks all of them.
class RingMemory {
 public:
  bool allocate(std::string* error) {
    bytes_ = FrameRing::bytes_for(kLocalWireCapacity);
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      *error = std::string("wire: cannot map ") + std::to_string(bytes_) +
               " bytes for a frame ring: " + std::strerror(errno);
      return false;
    }
    madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: failure only costs speed
    memory_ = p;
    ring_.attach(memory_, kLocalWireCapacity);
    return true;
  }
  ~RingMemory() {
    if (memory_) munmap(memory_, bytes_);
  }
  FrameRing& ring() { return ring_; }

 private:
  void* memory_ = nullptr;
  size_t bytes_ = 0;
  FrameRing ring_;
};

// Transmits into `tx`, receives from `rx` (the same ring for loop).
class RingEndpoint final : public WireEndpoint {
 public:
  RingEndpoint(std::shared_ptr<RingMemory> tx, std::shared_ptr<RingMemory> rx)
      : tx_(std::move(tx)), rx_(std::move(rx)), tx_ring_(&tx_->ring()), rx_ring_(&rx_->ring()) {}
  bool transmit(const uint8_t* frame, uint32_t len) override { return tx_ring_->push(frame, len); }
  uint32_t receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) override {
    return rx_ring_->pop(buf, cap, full_len);
  }
  uint32_t peek() override { return rx_ring_->peek(); }
  FrameRing* direct_tx_ring() override { return tx_ring_; }
  FrameRing* direct_rx_ring() override { return rx_ring_; }

 private:
  std::shared_ptr<RingMemory> tx_, rx_;  // keep the rings alive as long as either end
  FrameRing* tx_ring_;
  FrameRing* rx_ring_;
};

class NullEndpoint final : public WireEndpoint {
 public:
  bool transmit(const uint8_t*, uint32_t) override { return true; }
  uint32_t receive(uint8_t*, uint32_t, uint32_t* full_len) override {
    if (full_len) *full_len = 0;
    return 0;
  }
  uint32_t peek() override { return 0; }
};

std::shared_ptr<RingMemory> new_ring(std::string* error) {
  auto memory = std::make_shared<RingMemory>();
  return memory->allocate(error) ? memory : nullptr;
}

}  // namespace

std::unique_ptr<WireEndpoint> make_loop_endpoint(std::string* error) {
  auto ring = new_ring(error);
  if (!ring) return nullptr;
  return std::make_unique<RingEndpoint>(ring, ring);
}

std::pair<std::unique_ptr<WireEndpoint>, std::unique_ptr<WireEndpoint>> make_pair_endpoints(
    std::string* error) {
  auto a_to_b = new_ring(error);
  auto b_to_a = a_to_b ? new_ring(error) : nullptr;
  if (!b_to_a) return {};
  return {std::make_unique<RingEndpoint>(a_to_b, b_to_a),
          std::make_unique<RingEndpoint>(b_to_a, a_to_b)};
}

std::unique_ptr<WireEndpoint> make_null_endpoint() { return std::make_unique<NullEndpoint>(); }

}  // namespace mana::emu
