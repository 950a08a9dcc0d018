// SPDX-License-Identifier: BSD-3-Clause
// fabric:<name> (fabric_wire.h): attaching a port to the shared object and its endpoint.
#include "wire/fabric_wire.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "wire/endpoints.h"
#include "wire/fabric_ring.h"
#include "wire/ofd_lock.h"

namespace mana::emu {
namespace {

constexpr uint32_t kFabricMagic = 0x46414252;  // "FABR"
constexpr uint32_t kFabricLayoutVersion = 2;
constexpr size_t kFabricHeaderBytes = 4096;
constexpr size_t kFabricRingBytes = FabricRing::bytes_for(kFabricRingCapacity);
constexpr size_t kFabricBytes = kFabricHeaderBytes + kFabricMaxPorts * kFabricRingBytes;
constexpr off_t kFabricSetupLockByte = 0;
constexpr off_t slot_lock_byte(uint32_t slot) { return 1 + slot; }

// One port slot. Identity fields change only under the setup lock, before `attached` is set;
// the counters and `rx_polled_ns` (the time the owner's device spent polling the port: what
// senders waiting for room in its ring look at) are written by the owner's device thread only.
struct alignas(64) FabricPortEntry {
  std::atomic<uint32_t> attached;
  uint8_t ipv4[4];
  uint8_t mac[6];
  uint8_t reserved[6];
  std::atomic<uint64_t> delivered, arp_replies, group_not_delivered, unknown_ip, spoofed,
      unroutable, full_drops;
  std::atomic<uint64_t> rx_polled_ns;
};
static_assert(sizeof(FabricPortEntry) == 128);

struct FabricHeader {
  uint32_t magic, version, max_ports, capacity, slot_size;
  std::atomic<uint32_t> table_version;  // moves on every attach and detach
  alignas(64) FabricPortEntry ports[kFabricMaxPorts];
};
static_assert(sizeof(FabricHeader) <= kFabricHeaderBytes);
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared across processes");

bool layout_matches(const FabricHeader& h) {
  return h.magic == kFabricMagic && h.version == kFabricLayoutVersion &&
         h.max_ports == kFabricMaxPorts && h.capacity == kFabricRingCapacity &&
         h.slot_size == sizeof(FabricSlot);
}

uint8_t* ring_memory(void* map, uint32_t slot) {
  return static_cast<uint8_t*>(map) + kFabricHeaderBytes + slot * kFabricRingBytes;
}

std::string path_of(const std::string& name) { return "/mana-emu-fabric-" + name; }

// Single writer: a plain load and store instead of a locked read-modify-write.
void bump(std::atomic<uint64_t>& c) {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Whether slot `i` belongs to a live process (only under the setup lock; makes syscalls).
bool slot_live(int fd, const FabricPortEntry& e, uint32_t i) {
  return e.attached.load(std::memory_order_acquire) && byte_held_by_other(fd, slot_lock_byte(i));
}

class FabricEndpoint final : public WireEndpoint {
 public:
  FabricEndpoint(std::string path, int fd, void* map, uint32_t slot, const FabricMac& mac)
      : path_(std::move(path)),
        fd_(fd),
        map_(map),
        header_(static_cast<FabricHeader*>(map)),
        slot_(slot),
        self_(header_->ports[slot]),
        mac_(mac) {
    for (uint32_t i = 0; i < kFabricMaxPorts; ++i)
      rings_[i].attach(ring_memory(map_, i), kFabricRingCapacity);
  }

  // The last port to leave removes the object's name, so the next user starts a fresh fabric.
  ~FabricEndpoint() override {
    wait_lock_byte(fd_, kFabricSetupLockByte);
    self_.attached.store(0, std::memory_order_release);
    header_->table_version.fetch_add(1, std::memory_order_release);
    unlock_byte(fd_, slot_lock_byte(slot_));
    bool others = false;
    for (uint32_t i = 0; i < kFabricMaxPorts; ++i)
      others |= byte_held_by_other(fd_, slot_lock_byte(i));
    struct stat st {};
    if (!others && fstat(fd_, &st) == 0 && st.st_nlink > 0) shm_unlink(path_.c_str());
    munmap(map_, kFabricBytes);
    close(fd_);
  }

  bool transmit(const uint8_t* frame, uint32_t len) override {
    retry_ = false;
    if (len < 14 || len > kWireMaxFrameLen) {  // never "full": not worth waiting for
      bump(self_.unroutable);
      return false;
    }
    if (std::memcmp(frame + 6, mac_.data(), 6) != 0) {
      bump(self_.spoofed);
      return false;
    }
    const FabricFrame f = classify_fabric_frame(frame, len);
    switch (f.kind) {
      case FabricFrameKind::kArpRequest:
        return answer_arp(frame, f);
      case FabricFrameKind::kGroup:
        bump(self_.group_not_delivered);
        return true;  // taken by the vSwitch; on Azure it reaches the synthetic NIC only
      case FabricFrameKind::kUnroutable:
        bump(self_.unroutable);
        return false;
      case FabricFrameKind::kIpv4Unicast:
        break;
    }
    const Route* to = route(f.target);
    if (to == nullptr) {
      bump(self_.unknown_ip);
      return false;
    }
    if (rings_[to->slot].push(frame, len, to->macs)) {
      bump(self_.delivered);
      stalled_ = false;
      if (dropping_to_ == to->slot) dropping_to_ = kNone;
      return true;
    }
    return refused(to->slot);
  }

  uint32_t receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) override {
    return rings_[slot_].pop(buf, cap, full_len);
  }
  uint32_t peek() override { return rings_[slot_].peek(); }
  bool retry_later() override { return retry_; }
  bool holds_rx_frames() const override { return true; }
  // Adds the time since the last poll when it was short: the device ran in between.
  void receiver_polled() override {
    const auto now = std::chrono::steady_clock::now();
    const auto gap = now - last_poll_;
    last_poll_ = now;
    if (gap < std::chrono::milliseconds(kFabricPollGapMs)) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(gap).count();
      self_.rx_polled_ns.store(
          self_.rx_polled_ns.load(std::memory_order_relaxed) + static_cast<uint64_t>(ns),
          std::memory_order_relaxed);
    }
  }

 private:
  static constexpr uint32_t kNone = ~0u;
  struct Route {
    FabricIpv4 ip;
    uint32_t slot;
    uint8_t macs[12];  // the receiver's MAC, then the gateway's: the rewritten header
  };

  bool answer_arp(const uint8_t* frame, const FabricFrame& f) {
    if (std::memcmp(f.target.data(), self_.ipv4, 4) == 0) {  // probe for its own address
      bump(self_.group_not_delivered);
      return true;
    }
    uint8_t reply[kArpReplyFrameLen];
    build_arp_reply(frame, f.l3_offset, reply);
    if (!rings_[slot_].push(reply, sizeof reply, reply)) {
      bump(self_.full_drops);
      return false;
    }
    bump(self_.arp_replies);
    return true;
  }

  // The destination ring is full: wait (the device offers the frame again) for a bounded time,
  // counted while the receiver runs (fabric_wire.h).
  bool refused(uint32_t slot) {
    const auto now = std::chrono::steady_clock::now();
    if (dropping_to_ != slot) {
      const uint64_t polled = header_->ports[slot].rx_polled_ns.load(std::memory_order_relaxed);
      if (!stalled_) {
        stalled_ = true;
        stall_start_ = now;
        stall_polled_ns_ = polled;
      }
      const bool receiver_refused =
          polled - stall_polled_ns_ >= uint64_t{kFabricMaxStallMs} * 1'000'000;
      if (!receiver_refused &&
          now - stall_start_ < std::chrono::milliseconds(kFabricMaxReceiverAbsentMs)) {
        retry_ = true;
        return false;
      }
      dropping_to_ = slot;
    }
    stalled_ = false;
    bump(self_.full_drops);
    return false;
  }

  const Route* route(const FabricIpv4& ip) {
    const uint32_t version = header_->table_version.load(std::memory_order_acquire);
    if (version != table_version_) reload_routes(version);
    for (uint32_t i = 0; i < route_count_; ++i)
      if (routes_[i].ip == ip) return &routes_[i];
    return nullptr;
  }

  void reload_routes(uint32_t version) {
    route_count_ = 0;
    for (uint32_t i = 0; i < kFabricMaxPorts; ++i) {
      const FabricPortEntry& e = header_->ports[i];
      if (!e.attached.load(std::memory_order_acquire)) continue;
      Route& r = routes_[route_count_++];
      std::memcpy(r.ip.data(), e.ipv4, 4);
      r.slot = i;
      std::memcpy(r.macs, e.mac, 6);
      std::memcpy(r.macs + 6, kAzureGatewayMac.data(), 6);
    }
    table_version_ = version;
  }

  std::string path_;
  int fd_;
  void* map_;
  FabricHeader* header_;
  uint32_t slot_;
  FabricPortEntry& self_;
  FabricMac mac_;
  FabricRing rings_[kFabricMaxPorts];
  Route routes_[kFabricMaxPorts];
  uint32_t route_count_ = 0;
  uint32_t table_version_ = ~0u;
  bool retry_ = false;
  bool stalled_ = false;
  std::chrono::steady_clock::time_point stall_start_{};
  uint64_t stall_polled_ns_ = 0;  // the receiver's rx_polled_ns when the wait began
  std::chrono::steady_clock::time_point last_poll_{};  // this port's device, as a receiver
  uint32_t dropping_to_ = kNone;
};

// Opens and sizes the object, resetting it when nobody is attached. Under the setup lock on
// success (`*fd`, `*map`); `*retry` when it was unlinked under us.
bool open_locked(const std::string& path, const std::string& where, int* fd_out, void** map_out,
                 bool* retry, std::string* error) {
  *retry = false;
  const int fd = shm_open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = where + "shm_open " + path + ": " + std::strerror(errno);
    return false;
  }
  auto fail = [&](const std::string& what) {
    *error = where + what;
    close(fd);
    return false;
  };
  if (!wait_lock_byte(fd, kFabricSetupLockByte))
    return fail("cannot lock " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) < 0) return fail(std::string("fstat: ") + std::strerror(errno));
  if (st.st_nlink == 0) {
    close(fd);
    *retry = true;
    return false;
  }
  bool in_use = false;
  for (uint32_t i = 0; i < kFabricMaxPorts; ++i)
    in_use |= byte_held_by_other(fd, slot_lock_byte(i));
  if (!in_use && (ftruncate(fd, 0) < 0 || ftruncate(fd, kFabricBytes) < 0))
    return fail("cannot size " + path + ": " + std::strerror(errno));
  if (in_use && static_cast<size_t>(st.st_size) != kFabricBytes)
    return fail(path + " has another layout; its ports run an incompatible emulator");
  void* map = mmap(nullptr, kFabricBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return fail(std::string("mmap: ") + std::strerror(errno));
  auto* header = static_cast<FabricHeader*>(map);
  if (!in_use) {
    header->magic = kFabricMagic;
    header->version = kFabricLayoutVersion;
    header->max_ports = kFabricMaxPorts;
    header->capacity = kFabricRingCapacity;
    header->slot_size = sizeof(FabricSlot);
  } else if (!layout_matches(*header)) {
    munmap(map, kFabricBytes);
    return fail(path + " has another layout; its ports run an incompatible emulator");
  }
  *fd_out = fd;
  *map_out = map;
  return true;
}

// Under the setup lock: checks the port's IP and MAC against the live ports, forgets dead ones
// and claims a free slot (its ring emptied). Returns the slot or kFabricMaxPorts with `error`.
uint32_t claim_slot(int fd, FabricHeader* header, void* map, const FabricMac& mac,
                    const FabricIpv4& ip, const std::string& where, std::string* error) {
  uint32_t free_slot = kFabricMaxPorts;
  for (uint32_t i = 0; i < kFabricMaxPorts; ++i) {
    FabricPortEntry& e = header->ports[i];
    if (!slot_live(fd, e, i)) {
      if (e.attached.load(std::memory_order_relaxed)) {  // left by a process that died
        e.attached.store(0, std::memory_order_release);
        header->table_version.fetch_add(1, std::memory_order_release);
      }
      if (free_slot == kFabricMaxPorts) free_slot = i;
      continue;
    }
    if (std::memcmp(e.ipv4, ip.data(), 4) == 0) {
      *error = where + "IP " + format_fabric_ipv4(ip) + " is already used by another port";
      return kFabricMaxPorts;
    }
    if (std::memcmp(e.mac, mac.data(), 6) == 0) {
      *error = where + "MAC already used by another port of the fabric";
      return kFabricMaxPorts;
    }
  }
  if (free_slot == kFabricMaxPorts || !try_lock_byte(fd, slot_lock_byte(free_slot))) {
    *error = where + "all " + std::to_string(kFabricMaxPorts) + " ports are attached";
    return kFabricMaxPorts;
  }
  // A fresh, empty ring: zero pages (also drops what a dead owner left in it).
  const off_t ring_at = static_cast<off_t>(kFabricHeaderBytes + free_slot * kFabricRingBytes);
  if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, ring_at, kFabricRingBytes) < 0)
    std::memset(ring_memory(map, free_slot), 0,
                sizeof(FabricRingIndices) + sizeof(FabricSlot) * kFabricRingCapacity);
  FabricPortEntry& e = header->ports[free_slot];
  std::memcpy(e.ipv4, ip.data(), 4);
  std::memcpy(e.mac, mac.data(), 6);
  for (auto* c : {&e.delivered, &e.arp_replies, &e.group_not_delivered, &e.unknown_ip, &e.spoofed,
                  &e.unroutable, &e.full_drops})
    c->store(0, std::memory_order_relaxed);
  e.attached.store(1, std::memory_order_release);
  header->table_version.fetch_add(1, std::memory_order_release);
  return free_slot;
}

bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 200 && name.find('/') == std::string::npos;
}

}  // namespace

std::string format_fabric_ipv4(const FabricIpv4& ip) {
  return std::to_string(ip[0]) + "." + std::to_string(ip[1]) + "." + std::to_string(ip[2]) + "." +
         std::to_string(ip[3]);
}

void release_fabric_if_unused(const std::string& name) {
  const std::string path = path_of(name);
  const int fd = shm_open(path.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return;  // gone already
  if (wait_lock_byte(fd, kFabricSetupLockByte)) {
    bool in_use = false;
    for (uint32_t i = 0; i < kFabricMaxPorts; ++i)
      in_use |= byte_held_by_other(fd, slot_lock_byte(i));
    struct stat st {};
    if (!in_use && fstat(fd, &st) == 0 && st.st_nlink > 0) shm_unlink(path.c_str());
  }
  close(fd);  // also drops the setup lock
}

std::unique_ptr<WireEndpoint> open_fabric_endpoint(const std::string& name, const FabricMac& mac,
                                                   const FabricIpv4& ip, std::string* error) {
  const std::string where = "wire 'fabric:" + name + "': ";
  if (!valid_name(name)) {
    *error = where + "the fabric name needs 1..200 characters without '/'";
    return nullptr;
  }
  if (ip == FabricIpv4{}) {
    *error = where + "the port has no IPv4 address (give one with --ip A.B.C.D)";
    return nullptr;
  }
  const std::string path = path_of(name);
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = -1;
    void* map = nullptr;
    bool retry = false;
    if (!open_locked(path, where, &fd, &map, &retry, error)) {
      if (retry) continue;
      return nullptr;
    }
    auto* header = static_cast<FabricHeader*>(map);
    const uint32_t slot = claim_slot(fd, header, map, mac, ip, where, error);
    if (slot == kFabricMaxPorts) {
      munmap(map, kFabricBytes);
      close(fd);
      return nullptr;
    }
    auto endpoint = std::make_unique<FabricEndpoint>(path, fd, map, slot, mac);
    unlock_byte(fd, kFabricSetupLockByte);
    return endpoint;
  }
  *error = where + path + " keeps being removed while opening it";
  return nullptr;
}

bool read_fabric_counters(const std::string& name, std::vector<FabricPortCounters>* out,
                          std::string* error) {
  const std::string path = path_of(name);
  const int fd = valid_name(name) ? shm_open(path.c_str(), O_RDONLY | O_CLOEXEC, 0) : -1;
  if (fd < 0) {
    *error = "fabric '" + name + "': no such fabric (" + path + ": " + std::strerror(errno) + ")";
    return false;
  }
  struct stat st {};
  void* map = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= kFabricHeaderBytes
                  ? mmap(nullptr, kFabricHeaderBytes, PROT_READ, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) {
    *error = "fabric '" + name + "': " + path + " is not a fabric";
    return false;
  }
  const auto* header = static_cast<const FabricHeader*>(map);
  out->clear();
  const bool ok = layout_matches(*header);
  for (uint32_t i = 0; ok && i < kFabricMaxPorts; ++i) {
    const FabricPortEntry& e = header->ports[i];
    FabricPortCounters c;
    c.attached = e.attached.load(std::memory_order_acquire) != 0;
    std::memcpy(c.mac.data(), e.mac, 6);
    if (c.mac == FabricMac{}) continue;  // never used
    std::memcpy(c.ipv4.data(), e.ipv4, 4);
    c.delivered = e.delivered.load(std::memory_order_relaxed);
    c.arp_replies = e.arp_replies.load(std::memory_order_relaxed);
    c.group_not_delivered = e.group_not_delivered.load(std::memory_order_relaxed);
    c.unknown_ip = e.unknown_ip.load(std::memory_order_relaxed);
    c.spoofed = e.spoofed.load(std::memory_order_relaxed);
    c.unroutable = e.unroutable.load(std::memory_order_relaxed);
    c.full_drops = e.full_drops.load(std::memory_order_relaxed);
    out->push_back(c);
  }
  munmap(map, kFabricHeaderBytes);
  if (!ok) *error = "fabric '" + name + "': " + path + " has another layout";
  return ok;
}

}  // namespace mana::emu
