// SPDX-License-Identifier: BSD-3-Clause
#include "vmbus/synthetic_nic.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace mana::emu::vmbus {

namespace {

constexpr unsigned kPacketBudget = 64;  // guest packets per channel per pass
constexpr unsigned kFrameBudget = 64;   // wire frames per pass

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::span<uint8_t> map_file(const std::string& path, uint64_t size, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + strerror(errno);
    return {};
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    *error = "cannot map " + path + ": " + strerror(errno);
    return {};
  }
  return {static_cast<uint8_t*>(p), size};
}

}  // namespace

SyntheticNicHost::SyntheticNicHost(std::string root, SyntheticNic nic,
                                   const netvsc::NetvspConfig& config, SharedPortWire* wire)
    : root_(std::move(root)),
      nic_(std::move(nic)),
      config_(config),
      wire_(wire),
      name_("netvsc " + nic_.uuid) {}

SyntheticNicHost::~SyntheticNicHost() {
  for (auto& ring : ring_maps_)
    if (!ring.empty()) ::munmap(ring.data(), ring.size());
  if (!receive_.empty()) ::munmap(receive_.data(), receive_.size());
  if (!send_.empty()) ::munmap(send_.data(), send_.size());
}

bool SyntheticNicHost::map(std::string* error) {
  ring_maps_[0] = map_file(vmbus_map_file(root_, nic_, 0), vmbus_map_size(0), error);
  receive_ = map_file(vmbus_map_file(root_, nic_, 3), vmbus_map_size(3), error);
  send_ = map_file(vmbus_map_file(root_, nic_, 4), vmbus_map_size(4), error);
  if (ring_maps_[0].empty() || receive_.empty() || send_.empty()) return false;
  channels_[0] = std::make_unique<VmbusChannel>(ring_maps_[0]);
  channel_count_ = 1;
  memory_ = std::make_unique<SharedGuestMemory>(nic_.recv_gpadl, receive_, nic_.send_gpadl, send_);
  host_ = std::make_unique<netvsc::NetvspHost>(config_, *memory_, *this);
  return true;
}

void SyntheticNicHost::opened() {
  std::lock_guard guard(lock_);
  start_session();
}

void SyntheticNicHost::closed() {
  std::lock_guard guard(lock_);
  end_session();
}

void SyntheticNicHost::start_session() {
  end_session();
  channels_[0]->reset();
  host_->reset();
  vf_announced_ = -1;  // announced again in the new session
  ++sessions_;
  open_ = true;
  wire_->set_group_frames_synthetic(config_.group_frames_synthetic);
  wire_->set_synthetic_open(true);
}

void SyntheticNicHost::end_session() {
  if (!open_) return;
  open_ = false;
  wire_->set_synthetic_open(false);
  wire_->set_data_path_on_vf(false);
  host_->reset();
  // The host rescinds the subchannels with the session (their files go away).
  for (unsigned k = 1; k < channel_count_; ++k) {
    channels_[k].reset();
    ::munmap(ring_maps_[k].data(), ring_maps_[k].size());
    ring_maps_[k] = {};
  }
  channel_count_ = 1;
  remove_vmbus_subchannels(root_, nic_);
}

void SyntheticNicHost::set_vf_present(bool present, unsigned delay_ms) {
  vf_due_ns_.store(now_ns() + int64_t{delay_ms} * 1'000'000, std::memory_order_relaxed);
  vf_wanted_.store(present ? 1 : 0, std::memory_order_release);
  wire_->set_vf_present(present);
}

void SyntheticNicHost::apply_vf_request() {
  const int wanted = vf_wanted_.load(std::memory_order_acquire);
  if (wanted == vf_announced_) return;
  if (wanted == 1 && now_ns() < vf_due_ns_.load(std::memory_order_relaxed)) return;
  if (wanted == 1 && vf_announced_ == 0) ++vf_serial_;  // a new VF instance
  host_->set_vf_available(wanted == 1, vf_serial_);
  vf_announced_ = wanted;
}

unsigned SyntheticNicHost::poll() {
  std::unique_lock guard(lock_, std::try_to_lock);
  if (!guard.owns_lock() || !open_) return 0;
  apply_vf_request();
  unsigned work = 0;
  // A channel offered while handling a packet is polled from the next pass on.
  const unsigned channels = channel_count_;
  // The port's send-rate cap, shared with the VF (--tx-pps): guest packets are read only while it
  // allows a frame, and the frames they carried are taken from it afterwards.
  TxRateCap& cap = wire_->tx_cap();
  for (unsigned k = 0; k < channels; ++k) {
    const unsigned budget = std::min(kPacketBudget, cap.available());
    if (budget == 0) break;
    const uint64_t sent = host_->counters().tx_packets;
    work += channels_[k]->poll(budget, name_.c_str(),
                               [&](const netvsc::GuestPacket& p) { host_->on_guest_packet(k, p); });
    cap.consume(host_->counters().tx_packets - sent);
  }
  for (unsigned n = 0; n < kFrameBudget; ++n) {
    const std::span<const uint8_t> frame = wire_->receive_synthetic();
    if (frame.empty()) break;
    host_->deliver_frame(frame);
    ++work;
  }
  host_->poll();
  wire_->set_data_path_on_vf(host_->data_path_on_vf());
  return work;
}

netvsc::HostChannel* SyntheticNicHost::channel(unsigned index) {
  return index < channel_count_ ? channels_[index].get() : nullptr;
}

unsigned SyntheticNicHost::offer_subchannels(unsigned count) {
  unsigned offered = 0;
  while (offered < count && channel_count_ < kMaxChannels) {
    std::string error;
    const unsigned sub = channel_count_;
    const std::string ring = offer_vmbus_subchannel(root_, nic_, sub, &error);
    std::span<uint8_t> area =
        ring.empty() ? std::span<uint8_t>{} : map_file(ring, vmbus_map_size(0), &error);
    if (area.empty()) {
      std::fprintf(stderr, "mana-emu: %s: cannot offer subchannel %u: %s\n", name_.c_str(), sub,
                   error.c_str());
      break;
    }
    ring_maps_[sub] = area;
    channels_[sub] = std::make_unique<VmbusChannel>(area);
    channels_[sub]->reset();
    ++channel_count_;
    ++offered;
  }
  return offered;
}

void SyntheticNicHost::transmit_frame(std::span<const uint8_t> frame) {
  if (!wire_->transmit_synthetic(frame)) ++tx_wire_drops_;
}

void SyntheticNicHost::data_path_switched(bool to_vf) { wire_->set_data_path_on_vf(to_vf); }

std::string SyntheticNicHost::counters_json() {
  std::lock_guard guard(lock_);
  const netvsc::NetvspCounters& c = host_->counters();
  const SharedWireCounters& w = wire_->counters();
  uint64_t guest_packets = 0, host_packets = 0, ring_full = 0, malformed_rings = 0;
  for (unsigned k = 0; k < channel_count_; ++k) {
    guest_packets += channels_[k]->counters().guest_packets;
    host_packets += channels_[k]->counters().host_packets;
    ring_full += channels_[k]->counters().ring_full;
    malformed_rings += channels_[k]->counters().malformed_rings;
  }
  char text[1536];
  snprintf(
      text, sizeof(text),
      "{\"uuid\":\"%s\",\"open\":%d,\"sessions\":%llu,\"nvsp_version\":%u,\"channels\":%u,"
      "\"data_path_vf\":%d,\"vf_present\":%d,\"packet_filter\":%u,"
      "\"guest_packets\":%llu,\"host_packets\":%llu,\"ring_full\":%llu,"
      "\"malformed_rings\":%llu,\"nvs_messages\":%llu,\"rndis_control\":%llu,"
      "\"malformed\":%llu,\"tx_packets\":%llu,\"tx_bytes\":%llu,\"tx_completions\":%llu,"
      "\"tx_wire_drops\":%llu,\"rx_packets\":%llu,\"rx_bytes\":%llu,"
      "\"rx_dropped_not_ready\":%llu,\"rx_dropped_no_section\":%llu,"
      "\"rx_dropped_ring_full\":%llu,\"rx_filtered\":%llu,\"vfassoc_sent\":%llu,"
      "\"datapath_to_vf\":%llu,\"datapath_to_synthetic\":%llu,\"wire_to_vf\":%llu,"
      "\"wire_to_synthetic\":%llu,\"wire_synthetic_drops\":%llu}",
      nic_.uuid.c_str(), open_ ? 1 : 0, static_cast<unsigned long long>(sessions_),
      host_->nvsp_version(), channel_count_, host_->data_path_on_vf() ? 1 : 0,
      wire_->vf_present() ? 1 : 0, host_->packet_filter(),
      static_cast<unsigned long long>(guest_packets), static_cast<unsigned long long>(host_packets),
      static_cast<unsigned long long>(ring_full), static_cast<unsigned long long>(malformed_rings),
      static_cast<unsigned long long>(c.nvs_messages),
      static_cast<unsigned long long>(c.rndis_control),
      static_cast<unsigned long long>(c.malformed), static_cast<unsigned long long>(c.tx_packets),
      static_cast<unsigned long long>(c.tx_bytes),
      static_cast<unsigned long long>(c.tx_completions),
      static_cast<unsigned long long>(tx_wire_drops_),
      static_cast<unsigned long long>(c.rx_packets), static_cast<unsigned long long>(c.rx_bytes),
      static_cast<unsigned long long>(c.rx_dropped_not_ready),
      static_cast<unsigned long long>(c.rx_dropped_no_section),
      static_cast<unsigned long long>(c.rx_dropped_ring_full),
      static_cast<unsigned long long>(c.rx_filtered),
      static_cast<unsigned long long>(c.vfassoc_sent),
      static_cast<unsigned long long>(c.datapath_to_vf),
      static_cast<unsigned long long>(c.datapath_to_synthetic),
      static_cast<unsigned long long>(w.to_vf), static_cast<unsigned long long>(w.to_synthetic),
      static_cast<unsigned long long>(w.synthetic_drops));
  return text;
}

}  // namespace mana::emu::vmbus
