// SPDX-License-Identifier: BSD-3-Clause
// shm:<name>: a point-to-point link between two processes through the POSIX shared-memory object
// /mana-emu-<name>: a header page and two frame rings, A->B and B->A.
//
// Who is attached is kept by open-file-description (OFD) locks on the object, not by pids: byte 0
// is held by side A, byte 1 by side B, and byte 2 serialises opening and closing. The kernel drops
// a dead process's locks, so a link left behind by a crash is recognised as unused and reset, and
// a pid being reused cannot fool it. The data path never touches the locks: the rings alone carry
// frames, with acquire/release atomics (frame_ring.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wire/endpoints.h"
#include "wire/frame_ring.h"
#include "wire/ofd_lock.h"

namespace mana::emu {
namespace {

constexpr uint32_t kShmMagic = 0x4D454D53;  // "SMEM"
constexpr uint32_t kShmLayoutVersion = 1;
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kRingBytes = FrameRing::bytes_for(kShmWireCapacity);
constexpr size_t kLinkBytes = kHeaderBytes + 2 * kRingBytes;
constexpr off_t kSetupLockByte = 2;

struct ShmLinkHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t capacity;
  uint32_t slot_size;
};

uint8_t* ring_memory(void* map, int ring) {
  return static_cast<uint8_t*>(map) + kHeaderBytes + ring * kRingBytes;
}

class ShmEndpoint final : public WireEndpoint {
 public:
  ShmEndpoint(std::string path, int fd, void* map, int side)
      : path_(std::move(path)), fd_(fd), map_(map), side_(side) {
    tx_.attach(ring_memory(map_, side_), kShmWireCapacity);
    rx_.attach(ring_memory(map_, 1 - side_), kShmWireCapacity);
  }

  // The last end to leave removes the object's name, so the next user starts a fresh link.
  ~ShmEndpoint() override {
    wait_lock_byte(fd_, kSetupLockByte);
    unlock_byte(fd_, side_);
    struct stat st {};
    const bool still_named = fstat(fd_, &st) == 0 && st.st_nlink > 0;
    if (still_named && !byte_held_by_other(fd_, 1 - side_)) shm_unlink(path_.c_str());
    munmap(map_, kLinkBytes);
    close(fd_);  // drops the setup lock
  }

  bool transmit(const uint8_t* frame, uint32_t len) override { return tx_.push(frame, len); }
  uint32_t receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) override {
    return rx_.pop(buf, cap, full_len);
  }
  uint32_t peek() override { return rx_.peek(); }

 private:
  std::string path_;
  int fd_;
  void* map_;
  int side_;  // 0 = A, 1 = B; also the lock byte that marks it taken
  FrameRing tx_, rx_;
};

// Opens the object once: nullptr with `*retry` set when it was unlinked under us.
std::unique_ptr<WireEndpoint> try_open(const std::string& spec, const std::string& path,
                                       bool* retry, std::string* error) {
  *retry = false;
  const int fd = shm_open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "wire '" + spec + "': shm_open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  auto fail = [&](const std::string& what) {
    *error = "wire '" + spec + "': " + what;
    close(fd);  // also drops any lock taken on it
    return nullptr;
  };
  if (!wait_lock_byte(fd, kSetupLockByte))
    return fail(std::string("cannot lock ") + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) < 0) return fail(std::string("fstat: ") + std::strerror(errno));
  if (st.st_nlink == 0) {  // the last user unlinked it between our open and our lock
    close(fd);
    *retry = true;
    return nullptr;
  }
  // Nobody attached: the object is new or left by processes that are gone. Start it afresh.
  const bool in_use = byte_held_by_other(fd, 0) || byte_held_by_other(fd, 1);
  if (!in_use && (ftruncate(fd, 0) < 0 || ftruncate(fd, kLinkBytes) < 0))
    return fail(std::string("cannot size ") + path + ": " + std::strerror(errno));
  if (in_use && static_cast<size_t>(st.st_size) != kLinkBytes)
    return fail(path + " has another layout (size " + std::to_string(st.st_size) +
                "); its other end runs an incompatible emulator");
  void* map = mmap(nullptr, kLinkBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return fail(std::string("mmap: ") + std::strerror(errno));
  auto* header = static_cast<ShmLinkHeader*>(map);
  const ShmLinkHeader expected{kShmMagic, kShmLayoutVersion, kShmWireCapacity, sizeof(FrameSlot)};
  if (!in_use) {
    *header = expected;  // the rings are zero after the truncation
  } else if (std::memcmp(header, &expected, sizeof expected) != 0) {
    munmap(map, kLinkBytes);
    return fail(path + " has another layout; its other end runs an incompatible emulator");
  }
  const int side = try_lock_byte(fd, 0) ? 0 : try_lock_byte(fd, 1) ? 1 : -1;
  if (side < 0) {
    munmap(map, kLinkBytes);
    return fail("the shm link already has both ends attached");
  }
  auto endpoint = std::make_unique<ShmEndpoint>(path, fd, map, side);
  unlock_byte(fd, kSetupLockByte);
  return endpoint;
}

}  // namespace

// The endpoint's destructor does not run when its process exits without closing the device (a
// DPDK application's exit): `mana-emu run` calls this when its command ended.
void release_shm_if_unused(const std::string& name) {
  const std::string path = "/mana-emu-" + name;
  const int fd = shm_open(path.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return;  // gone already
  if (wait_lock_byte(fd, kSetupLockByte)) {
    struct stat st {};
    const bool in_use = byte_held_by_other(fd, 0) || byte_held_by_other(fd, 1);
    if (!in_use && fstat(fd, &st) == 0 && st.st_nlink > 0) shm_unlink(path.c_str());
  }
  close(fd);  // also drops the setup lock
}

std::unique_ptr<WireEndpoint> open_shm_endpoint(const std::string& name, std::string* error) {
  const std::string spec = "shm:" + name;
  if (name.empty() || name.size() > 200 || name.find('/') != std::string::npos) {
    *error = "wire '" + spec + "': the link name needs 1..200 characters without '/'";
    return nullptr;
  }
  const std::string path = "/mana-emu-" + name;
  // Each retry follows a last user's unlink, which cannot repeat without new users.
  for (int attempt = 0; attempt < 100; ++attempt) {
    bool retry = false;
    auto endpoint = try_open(spec, path, &retry, error);
    if (!retry) return endpoint;
  }
  *error = "wire '" + spec + "': " + path + " keeps being removed while opening it";
  return nullptr;
}

}  // namespace mana::emu
