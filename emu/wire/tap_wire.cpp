// SPDX-License-Identifier: BSD-3-Clause
// tap:<ifname>: frames go to and come from a Linux TAP interface, so ping, tcpdump or scapy on the
// host can be the peer. The fd is non-blocking: the device thread never waits on the kernel.
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wire/endpoints.h"

namespace mana::emu {
namespace {

// Largest frame the kernel can hand us (64 KiB IP packet plus Ethernet and VLAN headers).
constexpr uint32_t kTapReadBuffer = 65536 + 64;

class TapEndpoint final : public WireEndpoint {
 public:
  explicit TapEndpoint(int fd) : fd_(fd), pending_(new uint8_t[kTapReadBuffer]) {}
  ~TapEndpoint() override { close(fd_); }

  bool transmit(const uint8_t* frame, uint32_t len) override {
    return write(fd_, frame, len) == static_cast<ssize_t>(len);
  }

  // A frame is read whole into `pending_` first: a short read of a TAP fd would lose the rest of
  // the frame and its length, and peek() needs the length without taking the frame.
  uint32_t peek() override {
    if (pending_len_ == 0) {
      const ssize_t n = read(fd_, pending_.get(), kTapReadBuffer);
      if (n > 0) pending_len_ = static_cast<uint32_t>(n);
    }
    return pending_len_;
  }

  uint32_t receive(uint8_t* buf, uint32_t cap, uint32_t* full_len) override {
    const uint32_t len = peek();
    if (full_len) *full_len = len;
    const uint32_t copied = len < cap ? len : cap;
    std::memcpy(buf, pending_.get(), copied);
    pending_len_ = 0;
    return copied;
  }

 private:
  int fd_;
  std::unique_ptr<uint8_t[]> pending_;
  uint32_t pending_len_ = 0;
};

}  // namespace

std::unique_ptr<WireEndpoint> open_tap_endpoint(const std::string& ifname, std::string* error) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
    *error = "wire 'tap:" + ifname + "': the interface name needs 1.." +
             std::to_string(IFNAMSIZ - 1) + " characters";
    return nullptr;
  }
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = "wire 'tap:" + ifname + "': cannot open /dev/net/tun: " + std::strerror(errno) +
             " (load the tun module; TAP needs CAP_NET_ADMIN)";
    return nullptr;
  }
  ifreq req{};
  std::memcpy(req.ifr_name, ifname.c_str(), ifname.size());
  req.ifr_flags = IFF_TAP | IFF_NO_PI;  // creates the interface when it does not exist
  if (ioctl(fd, TUNSETIFF, &req) < 0) {
    const int err = errno;
    close(fd);
    *error = "wire 'tap:" + ifname + "': TUNSETIFF failed: " + std::strerror(err) +
             (err == EBUSY   ? " (another process has the interface open)"
              : err == EPERM ? " (needs CAP_NET_ADMIN: run as root, or create a persistent TAP "
                               "owned by this user first: ip tuntap add dev " +
                                   ifname + " mode tap user $USER)"
              : err == EINVAL ? " (an interface of that name exists and is not a TAP)"
                              : "");
    return nullptr;
  }
  return std::make_unique<TapEndpoint>(fd);
}

}  // namespace mana::emu
