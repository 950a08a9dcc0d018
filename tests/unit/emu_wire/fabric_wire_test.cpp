// SPDX-License-Identifier: BSD-3-Clause
// fabric:<name> wires: delivery by destination IP with MAC rewrite, ARP answered with the gateway
// MAC, broadcast/multicast not delivered, drops (unknown IP, spoofed source, unroutable), flow
// control on a full port, attach errors, and senders in two other processes at once (fork).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "wire/endpoints.h"
#include "wire/fabric_wire.h"
#include "wire/frame_ring.h"
#include "wire_test_util.h"

namespace {

using mana::emu::FabricIpv4;
using mana::emu::FabricMac;
using mana::emu::FabricPortCounters;
using mana::emu::kAzureGatewayMac;
using mana::emu::kFabricMaxPorts;
using mana::emu::kFabricMaxStallMs;
using mana::emu::kFabricRingCapacity;
using mana::emu::kWireMaxFrameLen;
using mana::emu::WireEndpoint;
using namespace std::chrono_literals;
using wire_test::wait_until;

std::string unique_fabric(const char* what) {
  return "unit-" + std::to_string(getpid()) + "-" + what;
}

bool fabric_exists(const std::string& name) {
  struct stat st {};
  return stat(("/dev/shm/mana-emu-fabric-" + name).c_str(), &st) == 0;
}

FabricMac mac_of(uint8_t n) { return {0x00, 0x0d, 0x3a, 0x00, 0x0f, n}; }
FabricIpv4 ip_of(uint8_t n) { return {198, 18, 0, n}; }  // RFC 2544 benchmarking range

std::unique_ptr<WireEndpoint> attach(const std::string& name, uint8_t n) {
  std::string error;
  auto e = mana::emu::open_fabric_endpoint(name, mac_of(n), ip_of(n), &error);
  EXPECT_TRUE(e) << error;
  return e;
}

// An IPv4/UDP frame from port `from` to `to_ip`, Ethernet destination `dst_mac`, carrying `seq`.
std::vector<uint8_t> ipv4_frame(uint8_t from, FabricIpv4 to_ip, FabricMac dst_mac, uint32_t seq,
                                uint32_t len = 60) {
  std::vector<uint8_t> f(len);
  std::memcpy(f.data(), dst_mac.data(), 6);
  std::memcpy(f.data() + 6, mac_of(from).data(), 6);
  f[12] = 0x08;
  f[13] = 0x00;
  f[14] = 0x45;
  f[23] = 17;
  std::memcpy(&f[26], ip_of(from).data(), 4);
  std::memcpy(&f[30], to_ip.data(), 4);
  std::memcpy(&f[42], &seq, sizeof seq);
  return f;
}

std::vector<uint8_t> arp_request(uint8_t from, FabricIpv4 asked) {
  std::vector<uint8_t> f(60);
  std::memset(f.data(), 0xff, 6);
  std::memcpy(f.data() + 6, mac_of(from).data(), 6);
  const uint8_t head[] = {0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01};
  std::memcpy(&f[12], head, sizeof head);
  std::memcpy(&f[22], mac_of(from).data(), 6);
  std::memcpy(&f[28], ip_of(from).data(), 4);
  std::memcpy(&f[38], asked.data(), 4);
  return f;
}

bool send(WireEndpoint& e, const std::vector<uint8_t>& f) {
  return e.transmit(f.data(), static_cast<uint32_t>(f.size()));
}

std::vector<uint8_t> take(WireEndpoint& e) {
  std::vector<uint8_t> buf(kWireMaxFrameLen);
  uint32_t full = 0;
  buf.resize(e.receive(buf.data(), static_cast<uint32_t>(buf.size()), &full));
  return buf;
}

FabricPortCounters counters_of(const std::string& name, uint8_t n) {
  std::vector<FabricPortCounters> ports;
  std::string error;
  EXPECT_TRUE(mana::emu::read_fabric_counters(name, &ports, &error)) << error;
  for (const auto& c : ports)
    if (c.mac == mac_of(n)) return c;
  ADD_FAILURE() << "port " << int(n) << " not attached";
  return {};
}

TEST(FabricWire, DeliversByDestinationIpAndRewritesMacs) {
  const std::string name = unique_fabric("deliver");
  auto a = attach(name, 1), b = attach(name, 2), c = attach(name, 3);
  ASSERT_TRUE(a && b && c);
  // The destination MAC does not matter: the gateway's, a stranger's, the receiver's own.
  const FabricMac dsts[] = {kAzureGatewayMac, FabricMac{0x02, 0, 0, 0, 0, 0x99}, mac_of(2)};
  for (uint32_t i = 0; i < 3; ++i) {
    auto f = ipv4_frame(1, ip_of(2), dsts[i], i, 60 + i * 100);
    ASSERT_TRUE(send(*a, f));
    auto got = take(*b);
    ASSERT_EQ(got.size(), f.size());
    EXPECT_EQ(0, std::memcmp(got.data(), mac_of(2).data(), 6));
    EXPECT_EQ(0, std::memcmp(got.data() + 6, kAzureGatewayMac.data(), 6));
    EXPECT_EQ(0, std::memcmp(got.data() + 12, f.data() + 12, f.size() - 12));
  }
  EXPECT_EQ(c->peek(), 0u);
  EXPECT_EQ(a->peek(), 0u);
  EXPECT_EQ(counters_of(name, 1).delivered, 3u);
}

TEST(FabricWire, AnswersArpWithTheGatewayMac) {
  const std::string name = unique_fabric("arp");
  auto a = attach(name, 1), b = attach(name, 2);
  ASSERT_TRUE(a && b);
  for (FabricIpv4 asked : {FabricIpv4{198, 18, 0, 254}, ip_of(2), FabricIpv4{198, 19, 7, 7}}) {
    ASSERT_TRUE(send(*a, arp_request(1, asked)));
    auto r = take(*a);
    ASSERT_EQ(r.size(), mana::emu::kArpReplyFrameLen);
    EXPECT_EQ(0, std::memcmp(r.data(), mac_of(1).data(), 6));
    EXPECT_EQ(0, std::memcmp(r.data() + 6, kAzureGatewayMac.data(), 6));
    EXPECT_EQ(r[12], 0x08);
    EXPECT_EQ(r[13], 0x06);
    EXPECT_EQ(r[21], 2);  // reply
    EXPECT_EQ(0, std::memcmp(&r[22], kAzureGatewayMac.data(), 6));
    EXPECT_EQ(0, std::memcmp(&r[28], asked.data(), 4));
    EXPECT_EQ(0, std::memcmp(&r[32], mac_of(1).data(), 6));
    EXPECT_EQ(0, std::memcmp(&r[38], ip_of(1).data(), 4));
  }
  EXPECT_EQ(b->peek(), 0u);                         // the request itself reaches no port
  ASSERT_TRUE(send(*a, arp_request(1, ip_of(1))));  // probe of its own address: no answer
  EXPECT_EQ(a->peek(), 0u);
  EXPECT_EQ(counters_of(name, 1).arp_replies, 3u);
}

TEST(FabricWire, BroadcastAndMulticastReachNoPort) {
  const std::string name = unique_fabric("group");
  auto a = attach(name, 1), b = attach(name, 2);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(send(*a, ipv4_frame(1, ip_of(2), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1)));
  EXPECT_TRUE(send(*a, ipv4_frame(1, {224, 0, 0, 1}, {0x01, 0x00, 0x5e, 0, 0, 1}, 2)));
  EXPECT_EQ(b->peek(), 0u);
  EXPECT_EQ(a->peek(), 0u);
  EXPECT_EQ(counters_of(name, 1).group_not_delivered, 2u);
}

TEST(FabricWire, DropsUnknownIpSpoofedSourceAndUnroutableFrames) {
  const std::string name = unique_fabric("drops");
  auto a = attach(name, 1), b = attach(name, 2);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(send(*a, ipv4_frame(1, {198, 18, 9, 9}, mac_of(2), 1)));
  EXPECT_FALSE(a->retry_later());
  auto spoofed = ipv4_frame(1, ip_of(2), mac_of(2), 2);
  spoofed[11] ^= 1;
  EXPECT_FALSE(send(*a, spoofed));
  EXPECT_FALSE(a->retry_later());
  auto ipv6 = ipv4_frame(1, ip_of(2), mac_of(2), 3);
  ipv6[12] = 0x86;
  ipv6[13] = 0xdd;
  EXPECT_FALSE(send(*a, ipv6));
  EXPECT_FALSE(send(*a, ipv4_frame(1, ip_of(2), mac_of(2), 4, kWireMaxFrameLen + 1)));
  EXPECT_FALSE(a->retry_later());
  EXPECT_EQ(b->peek(), 0u);
  const FabricPortCounters c = counters_of(name, 1);
  EXPECT_EQ(c.unknown_ip, 1u);
  EXPECT_EQ(c.spoofed, 1u);
  EXPECT_EQ(c.unroutable, 2u);
  EXPECT_EQ(c.delivered, 0u);
}

// The receiver `rx` polls as a device thread does, busily, while `tx` offers `frame` to it, until
// the fabric drops the frame; returns how long that took. The fabric drops after 10 s at the
// latest (the absent limit): a failure after 20 s.
std::chrono::steady_clock::duration poll_until_dropped(WireEndpoint& tx, WireEndpoint& rx,
                                                       const std::vector<uint8_t>& frame) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 20s) {
    rx.receiver_polled();
    if (!send(tx, frame) && !tx.retry_later()) return std::chrono::steady_clock::now() - start;
  }
  ADD_FAILURE() << "the fabric still held the frame back after 20 s of the receiver polling";
  return std::chrono::steady_clock::now() - start;
}

TEST(FabricWire, FullPortHoldsTheSenderThenDropsAfterTheStallLimit) {
  const std::string name = unique_fabric("full");
  auto a = attach(name, 1), b = attach(name, 2);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(b->holds_rx_frames());
  for (uint32_t i = 0; i < kFabricRingCapacity; ++i)
    ASSERT_TRUE(send(*a, ipv4_frame(1, ip_of(2), mac_of(2), i))) << i;
  auto extra = ipv4_frame(1, ip_of(2), mac_of(2), kFabricRingCapacity);
  EXPECT_FALSE(send(*a, extra));
  EXPECT_TRUE(a->retry_later());  // flow control: offer it again later
  take(*b);
  EXPECT_TRUE(send(*a, extra));
  // The receiver polls but stops taking frames: after the stall limit the sender drops, then at
  // once.
  EXPECT_FALSE(send(*a, extra));
  EXPECT_GE(poll_until_dropped(*a, *b, extra), std::chrono::milliseconds(kFabricMaxStallMs));
  EXPECT_FALSE(send(*a, extra));
  EXPECT_FALSE(a->retry_later());
  EXPECT_EQ(counters_of(name, 1).full_drops, 2u);
  // Room again: delivered in order, the first one first.
  for (uint32_t i = 1; i <= kFabricRingCapacity; ++i) {
    auto got = take(*b);
    ASSERT_EQ(got.size(), 60u);
    uint32_t seq;
    std::memcpy(&seq, &got[42], sizeof seq);
    EXPECT_EQ(seq, i);
  }
  EXPECT_TRUE(send(*a, extra));
}

// A receiver that does not run (a loaded machine, a paused VM) refused nothing: its senders wait
// past the stall limit, and drop only once it has polled for that long, or after the absent limit.
TEST(FabricWire, AReceiverThatDoesNotPollHoldsTheSenderPastTheStallLimit) {
  const std::string name = unique_fabric("absent");
  auto a = attach(name, 1), b = attach(name, 2);
  ASSERT_TRUE(a && b);
  for (uint32_t i = 0; i < kFabricRingCapacity; ++i)
    ASSERT_TRUE(send(*a, ipv4_frame(1, ip_of(2), mac_of(2), i))) << i;
  auto extra = ipv4_frame(1, ip_of(2), mac_of(2), kFabricRingCapacity);
  EXPECT_FALSE(send(*a, extra));
  const auto waited_from = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - waited_from <
         std::chrono::milliseconds(kFabricMaxStallMs + 200)) {
    ASSERT_FALSE(send(*a, extra));
    ASSERT_TRUE(a->retry_later()) << "dropped although the receiver never polled";
    std::this_thread::sleep_for(10ms);
  }
  // The receiver's time counts from here: the sender drops once it polled for the stall limit.
  EXPECT_GE(poll_until_dropped(*a, *b, extra), std::chrono::milliseconds(kFabricMaxStallMs));
  EXPECT_EQ(counters_of(name, 1).full_drops, 1u);
}

TEST(FabricWire, AttachErrorsAreClear) {
  const std::string name = unique_fabric("errors");
  std::string error;
  EXPECT_FALSE(mana::emu::open_fabric_endpoint(name, mac_of(1), {}, &error));
  EXPECT_NE(error.find("no IPv4 address (give one with --ip A.B.C.D)"), std::string::npos) << error;
  auto a = attach(name, 1);
  ASSERT_TRUE(a);
  EXPECT_FALSE(mana::emu::open_fabric_endpoint(name, mac_of(2), ip_of(1), &error));
  EXPECT_NE(error.find("IP 198.18.0.1 is already used by another port"), std::string::npos)
      << error;
  std::vector<std::unique_ptr<WireEndpoint>> more;
  for (uint8_t n = 2; n <= kFabricMaxPorts; ++n) more.push_back(attach(name, n));
  EXPECT_FALSE(mana::emu::open_fabric_endpoint(name, mac_of(99), ip_of(99), &error));
  EXPECT_NE(error.find("all 16 ports are attached"), std::string::npos) << error;
  more.clear();
  a.reset();
  EXPECT_FALSE(fabric_exists(name));  // the last port to leave removes it
}

// Child: attaches as port `n`, waits for the parent's go, sends `count` frames to port 1 (offering
// each again while the fabric holds it back; a frame the fabric drops after its stall limit, when
// the receiving process was not scheduled for that long, counts in the port's `full_drops`).
[[noreturn]] void child_sender(const std::string& name, uint8_t n, uint32_t count, int go_fd) {
  int status = 10;
  std::string error;
  auto e = mana::emu::open_fabric_endpoint(name, mac_of(n), ip_of(n), &error);
  char go = 0;
  if (e && read(go_fd, &go, 1) == 1) {
    status = 0;
    for (uint32_t i = 0; i < count; ++i) {
      auto f = ipv4_frame(n, ip_of(1), kAzureGatewayMac, i, 60 + (i * 37) % 1400);
      while (!send(*e, f) && e->retry_later()) {
      }
    }
  }
  _exit(status);
}

// The frames port `n` lost to a full receiver (its `full_drops`), or ~0 when unreadable.
uint64_t full_drops_of(const std::string& name, uint8_t n) {
  std::vector<FabricPortCounters> ports;
  std::string error;
  if (!mana::emu::read_fabric_counters(name, &ports, &error)) return ~0ull;
  for (const auto& c : ports)
    if (c.ipv4 == ip_of(n)) return c.full_drops;
  return ~0ull;
}

TEST(FabricWire, TwoProcessesSendToOnePortAtOnce) {
  const std::string name = unique_fabric("fork");
  auto rx = attach(name, 1);
  ASSERT_TRUE(rx);
  constexpr uint32_t kCount = 20000;
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t children[2];
  for (int i = 0; i < 2; ++i) {
    children[i] = fork();
    ASSERT_GE(children[i], 0);
    if (children[i] == 0) child_sender(name, static_cast<uint8_t>(2 + i), kCount, go[0]);
  }
  ASSERT_TRUE(wait_until(
      [&] {
        std::vector<FabricPortCounters> ports;
        std::string error;
        if (!mana::emu::read_fabric_counters(name, &ports, &error)) return false;
        return std::count_if(ports.begin(), ports.end(), [](auto& c) { return c.attached; }) == 3;
      },
      20s))
      << "the two sender processes attaching";
  ASSERT_EQ(write(go[1], "gg", 2), 2);
  // Each sender's frames arrive in its order, whole; every frame is either delivered or counted
  // as a full drop (none on an idle machine; a loaded one may deschedule this process > 1 s).
  uint32_t next[2] = {0, 0};
  uint32_t delivered[2] = {0, 0};
  uint64_t drops[2] = {0, 0};
  const bool all = wait_until(
      [&] {
        while (rx->peek() != 0) {
          auto f = take(*rx);
          const int from = f[29] - 2;  // last byte of the source IP
          uint32_t seq;
          std::memcpy(&seq, &f[42], sizeof seq);
          if (from < 0 || from > 1 || seq < next[from] || f.size() != 60 + (seq * 37) % 1400) {
            ADD_FAILURE() << "from " << from << " seq " << seq << " expected >= " << next[from];
            return true;
          }
          next[from] = seq + 1;
          ++delivered[from];
        }
        for (int i = 0; i < 2; ++i) drops[i] = full_drops_of(name, static_cast<uint8_t>(2 + i));
        return delivered[0] + drops[0] == kCount && delivered[1] + drops[1] == kCount;
      },
      120s);
  EXPECT_TRUE(all) << "frames from both senders, delivered + dropped: " << delivered[0] << " + "
                   << drops[0] << ", " << delivered[1] << " + " << drops[1];
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(rx->peek(), 0u);
  close(go[0]);
  close(go[1]);
}

}  // namespace
