// SPDX-License-Identifier: BSD-3-Clause
// tap:<ifname> wire: frames written into the wire arrive on the Linux interface (seen with an
// AF_PACKET socket), and frames sent on the interface come out of the wire.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "wire_test_util.h"

namespace {

using mana::emu::WireEndpoint;
using namespace std::chrono_literals;
using wire_test::make;
using wire_test::wait_until;

constexpr const char* kIfName = "manatest0";
// IEEE 802 local experimental ethertypes: the kernel's own traffic (IPv6 autoconfiguration, MLD)
// on the new interface never uses them.
constexpr uint16_t kToKernelType = 0x88B5;
constexpr uint16_t kFromKernelType = 0x88B6;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::vector<uint8_t> test_frame(uint16_t ethertype, const char* text, size_t len) {
  const uint8_t header[14] = {0x02,
                              0,
                              0,
                              0,
                              0,
                              0xAA,
                              0x02,
                              0,
                              0,
                              0,
                              0,
                              0xBB,
                              static_cast<uint8_t>(ethertype >> 8),
                              static_cast<uint8_t>(ethertype)};
  std::vector<uint8_t> f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(i);
  std::memcpy(f.data(), header, sizeof header);
  std::memcpy(f.data() + sizeof header, text, std::strlen(text));
  return f;
}

uint16_t ethertype_of(const uint8_t* f) { return static_cast<uint16_t>((f[12] << 8) | f[13]); }

short interface_flags(int sock) {
  ifreq req{};
  std::strncpy(req.ifr_name, kIfName, IFNAMSIZ - 1);
  return ioctl(sock, SIOCGIFFLAGS, &req) == 0 ? req.ifr_flags : -1;
}

bool set_interface_up(int sock) {
  ifreq req{};
  std::strncpy(req.ifr_name, kIfName, IFNAMSIZ - 1);
  if (ioctl(sock, SIOCGIFFLAGS, &req) < 0) return false;
  req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP | IFF_NOARP);
  return ioctl(sock, SIOCSIFFLAGS, &req) == 0;
}

TEST(TapWire, FramesCrossBetweenWireAndInterface) {
  if (access("/dev/net/tun", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/net/tun";
  if (geteuid() != 0) GTEST_SKIP() << "TAP interfaces need root";

  std::string error;
  auto wires = make({std::string("tap:") + kIfName}, &error);
  ASSERT_TRUE(wires) << error;
  WireEndpoint* ep = wires->endpoint(0);

  Fd ctl(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_GE(ctl.get(), 0);
  const short flags = interface_flags(ctl.get());
  ASSERT_NE(flags, -1) << "the wire did not create " << kIfName;
  EXPECT_FALSE(flags & IFF_UP) << "the wire must leave the interface down";
  ASSERT_TRUE(set_interface_up(ctl.get())) << std::strerror(errno);

  const unsigned ifindex = if_nametoindex(kIfName);
  ASSERT_NE(ifindex, 0u);
  Fd raw(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)));
  ASSERT_GE(raw.get(), 0) << std::strerror(errno);
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = static_cast<int>(ifindex);
  ASSERT_EQ(bind(raw.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0)
      << std::strerror(errno);

  // Wire -> interface.
  const auto to_kernel = test_frame(kToKernelType, "mana wire to kernel", 90);
  ASSERT_TRUE(ep->transmit(to_kernel.data(), static_cast<uint32_t>(to_kernel.size())));
  std::vector<uint8_t> buf(2048);
  bool seen = false;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    pollfd p{raw.get(), POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(raw.get(), buf.data(), buf.size(), 0);
    seen = n == static_cast<ssize_t>(to_kernel.size()) &&
           std::equal(to_kernel.begin(), to_kernel.end(), buf.begin());
  }
  EXPECT_TRUE(seen) << "the frame written into the wire never reached " << kIfName;

  // Interface -> wire, twice: first received truncated, then whole. Other frames the kernel
  // sends on the new interface are skipped.
  const auto from_kernel = test_frame(kFromKernelType, "kernel to mana wire", 300);
  const uint32_t len = static_cast<uint32_t>(from_kernel.size());
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(send(raw.get(), from_kernel.data(), len, 0), static_cast<ssize_t>(len))
        << std::strerror(errno);
  const uint32_t caps[2] = {32, static_cast<uint32_t>(buf.size())};
  for (uint32_t cap : caps) {
    uint32_t got = 0, full_len = 0, peeked = 0;
    const bool arrived = wait_until(
        [&] {
          peeked = ep->peek();
          if (peeked == 0) return false;
          got = ep->receive(buf.data(), cap, &full_len);
          return ethertype_of(buf.data()) == kFromKernelType;
        },
        5s);
    ASSERT_TRUE(arrived) << "the frame sent on " << kIfName << " never came out of the wire";
    EXPECT_EQ(peeked, len);
    EXPECT_EQ(full_len, len);
    EXPECT_EQ(got, std::min(cap, len));
    EXPECT_TRUE(std::equal(from_kernel.begin(), from_kernel.begin() + got, buf.begin()));
  }

  // Closing the wire removes the (non-persistent) interface.
  wires.reset();
  EXPECT_EQ(if_nametoindex(kIfName), 0u);
}

}  // namespace
