// SPDX-License-Identifier: BSD-3-Clause
// One port's wire shared by the VF and its synthetic NIC, as Azure's host shares the VM's port
// between the two paths (doc/emulator.md "The synthetic NIC", doc/hardware.md §11.2): both send
// onto the wire; a frame from the wire goes to the VF when it is unicast and the guest switched
// the data path to a present VF (group frames too unless the host keeps them synthetic), to the
// synthetic NIC otherwise. While no synthetic NIC is open every frame goes to the VF, as without
// one. Only the device thread calls it (the VF side from Device::poll, the synthetic side from the
// NIC's poll); the steering flags are atomics that other threads may set.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "device/tx_rate_cap.h"
#include "wire/wire.h"

namespace mana::emu::vmbus {

struct SharedWireCounters {
  uint64_t to_vf = 0;
  uint64_t to_synthetic = 0;
  uint64_t synthetic_drops = 0;  // the synthetic NIC's queue was full
};

class SharedPortWire {
 public:
  static constexpr unsigned kQueueFrames = 256;
  static constexpr uint32_t kMaxFrame = 9216;

  explicit SharedPortWire(WireEndpoint* wire);

  // The endpoint the VF's device model uses.
  WireEndpoint* vf_endpoint() { return &vf_side_; }

  // Steering state.
  void set_synthetic_open(bool open) { synthetic_open_.store(open, std::memory_order_release); }
  void set_data_path_on_vf(bool on) { data_path_vf_.store(on, std::memory_order_release); }
  void set_vf_present(bool present) { vf_present_.store(present, std::memory_order_release); }
  void set_group_frames_synthetic(bool on) {
    group_synthetic_.store(on, std::memory_order_release);
  }
  bool vf_present() const { return vf_present_.load(std::memory_order_acquire); }

  // The synthetic side: a frame onto the wire; the next frame for it (its length, 0 when none;
  // the span is valid until the next call).
  bool transmit_synthetic(std::span<const uint8_t> frame);
  std::span<const uint8_t> receive_synthetic();

  const SharedWireCounters& counters() const { return counters_; }

  // The port's send-rate cap (--tx-pps), one bucket for the VF and the synthetic NIC: Azure caps
  // the VM's egress on every path (doc/hardware.md §9.20). The VF's device takes it through its
  // endpoint (shared_tx_cap), the synthetic NIC's host directly.
  TxRateCap& tx_cap() { return tx_cap_; }

 private:
  class VfSide final : public WireEndpoint {
   public:
    explicit VfSide(SharedPortWire* owner) : owner_(owner) {}
    bool transmit(const uint8_t* frame, uint32_t len) override;
    uint32_t receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) override;
    uint32_t peek() override;
    bool retry_later() override;
    bool holds_rx_frames() const override;
    void receiver_polled() override;
    TxRateCap* shared_tx_cap() override { return &owner_->tx_cap_; }

   private:
    SharedPortWire* owner_;
  };

  // Takes frames from the wire until one waits for the VF or the wire is empty.
  void pump();
  bool for_vf(std::span<const uint8_t> frame) const;

  WireEndpoint* wire_;
  VfSide vf_side_{this};
  std::atomic<bool> synthetic_open_{false};
  std::atomic<bool> data_path_vf_{false};
  std::atomic<bool> vf_present_{true};
  std::atomic<bool> group_synthetic_{true};
  // A frame taken from the wire for the VF, waiting for its receive.
  std::vector<uint8_t> held_;
  uint32_t held_len_ = 0;
  uint32_t held_full_ = 0;
  // Frames for the synthetic NIC.
  std::vector<uint8_t> queue_;
  std::array<uint32_t, kQueueFrames> queue_len_{};
  unsigned head_ = 0, count_ = 0;
  std::vector<uint8_t> delivered_;
  SharedWireCounters counters_;
  TxRateCap tx_cap_;
};

}  // namespace mana::emu::vmbus
