// SPDX-License-Identifier: BSD-3-Clause
// A test double of mana::emu::Device that records the control channel's calls.
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "device/device.h"

namespace mana::emu::testing {

class FakeDevice : public Device {
 public:
  explicit FakeDevice(VfConfig config) : config_(std::move(config)) {
    netdev_up_.resize(config_.ports.size());
    for (size_t p = 0; p < config_.ports.size(); ++p) netdev_up_[p] = config_.ports[p].netdev_up;
  }

  const VfConfig& config() const override { return config_; }
  int open_context(volatile uint64_t*, uint32_t*) override { return EOPNOTSUPP; }
  int close_context(uint32_t) override { return EOPNOTSUPP; }
  int alloc_pd(uint32_t, uint32_t*) override { return EOPNOTSUPP; }
  int dealloc_pd(uint32_t) override { return EOPNOTSUPP; }
  int reg_mr(uint32_t, uint64_t, uint64_t, uint32_t, uint32_t*) override { return EOPNOTSUPP; }
  int dereg_mr(uint32_t) override { return EOPNOTSUPP; }
  int create_cq(uint32_t, void*, uint32_t, CqEventFd, uint32_t*) override { return EOPNOTSUPP; }
  int destroy_cq(uint32_t) override { return EOPNOTSUPP; }
  int create_wq(uint32_t, uint32_t, void*, uint32_t, uint32_t, uint32_t, uint32_t,
                uint32_t*) override {
    return EOPNOTSUPP;
  }
  int destroy_wq(uint32_t) override { return EOPNOTSUPP; }
  int create_raw_qp(uint32_t, uint32_t, uint32_t, void*, uint32_t, uint32_t, uint32_t, uint32_t,
                    SqBinding*, uint32_t*) override {
    return EOPNOTSUPP;
  }
  int create_rss_qp(uint32_t, uint32_t, uint32_t, const uint32_t*, unsigned, uint8_t,
                    const uint8_t*, uint32_t, RqBinding*, uint32_t*) override {
    return EOPNOTSUPP;
  }
  int destroy_qp(uint32_t) override { return EOPNOTSUPP; }
  void ring(uint32_t, uint32_t, uint64_t) override {}
  void set_poll_doorbells(bool) override {}
  void set_shared_doorbell_slots(bool) override {}
  void hold_doorbell_page(uint32_t) override {}
  void release_doorbell_page(uint32_t) override {}
  void set_disassociate_destroy(bool) override {}
  bool context_disassociated(uint32_t) override { return false; }
  unsigned poll() override { return 0; }

  // Locked: a control server thread sets it while the test reads it, ordered only through a
  // socket and another process (mana-emu ctl), which ThreadSanitizer cannot follow.
  void set_netdev_up(uint32_t port, bool up) override {
    std::lock_guard g(netdev_mu_);
    netdev_up_.at(port) = up;
  }
  bool netdev_up(uint32_t port) const override {
    std::lock_guard g(netdev_mu_);
    return netdev_up_.at(port);
  }
  void inject(const Fault& fault) override { faults_.push_back(fault); }
  void set_present(bool present) override {
    present_ = present;
    presence_calls_.push_back(present);
  }
  bool present() const override { return present_; }
  QueueCounters sq_counters(uint32_t sq_id) const override { return find(sq_, sq_id); }
  QueueCounters rq_counters(uint32_t rq_id) const override { return find(rq_, rq_id); }
  PortCounters port_counters(uint32_t port) const override { return ports_.at(port); }
  LiveObjects live_objects() const override { return live_; }
  uint64_t bad_doorbells() const override { return bad_doorbells_; }

  // What the test sets or inspects.
  mutable std::mutex netdev_mu_;
  std::vector<bool> netdev_up_;
  std::vector<Fault> faults_;
  std::vector<bool> presence_calls_;
  bool present_ = true;
  std::map<uint32_t, QueueCounters> sq_, rq_;
  std::map<uint32_t, PortCounters> ports_;
  LiveObjects live_;
  uint64_t bad_doorbells_ = 0;

 private:
  static QueueCounters find(const std::map<uint32_t, QueueCounters>& m, uint32_t id) {
    auto it = m.find(id);
    return it == m.end() ? QueueCounters{} : it->second;
  }
  VfConfig config_;
};

}  // namespace mana::emu::testing
