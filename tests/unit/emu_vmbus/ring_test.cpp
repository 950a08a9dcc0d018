// SPDX-License-Identifier: BSD-3-Clause
// The host's VMBus channel against the guest's side of the ring protocol (guest_ring.h): packets
// each way, wrap-around, a full ring, malformed guest packets, a fresh open (doc/hardware.md
// §11.2).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "guest_ring.h"
#include "vmbus/guest_memory.h"
#include "vmbus/vmbus_channel.h"

namespace mana::emu::vmbus {
namespace {

using test::GuestRing;

// Two halves of one header page and one data page each: small enough to wrap quickly.
constexpr size_t kArea = 4 * kPageSize;

struct Channel : ::testing::Test {
  std::vector<uint8_t> area = std::vector<uint8_t>(kArea, 0xee);
  VmbusChannel host{area};
  GuestRing guest{area};
  void SetUp() override { host.reset(); }

  std::vector<netvsc::GuestPacket> read_all(std::vector<std::vector<uint8_t>>* bodies) {
    std::vector<netvsc::GuestPacket> out;
    host.poll(1000, "test", [&](const netvsc::GuestPacket& p) {
      out.push_back(p);
      bodies->emplace_back(p.body.begin(), p.body.end());
    });
    return out;
  }
};

std::vector<uint8_t> bytes(std::initializer_list<uint8_t> b) { return b; }

TEST_F(Channel, FreshOpenZeroesBothRingsAndMasksTheInboundInterrupt) {
  EXPECT_EQ(host.outbound().header().windex.load(), 0u);
  EXPECT_EQ(host.outbound().header().rindex.load(), 0u);
  EXPECT_EQ(host.outbound().header().imask.load(), 0u);
  EXPECT_EQ(host.inbound().header().windex.load(), 0u);
  EXPECT_EQ(host.inbound().header().imask.load(), 1u);
  EXPECT_EQ(host.outbound().dsize(), kPageSize);
}

TEST_F(Channel, InbandPacketFromTheGuestIsDecoded) {
  const auto body = bytes({1, 0, 0, 0, 1, 0, 6, 0, 1, 0, 6, 0});
  ASSERT_TRUE(
      guest.send(netvsc::kPacketInband, netvsc::kFlagCompletionRequested, 0x1234, {}, body));
  std::vector<std::vector<uint8_t>> bodies;
  auto packets = read_all(&bodies);
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].type, netvsc::kPacketInband);
  EXPECT_EQ(packets[0].flags, netvsc::kFlagCompletionRequested);
  EXPECT_EQ(packets[0].xact_id, 0x1234u);
  // The payload padded to 8 bytes, as the guest sends it.
  ASSERT_EQ(bodies[0].size(), 16u);
  EXPECT_TRUE(std::equal(body.begin(), body.end(), bodies[0].begin()));
  EXPECT_TRUE(packets[0].ranges.empty());
  // Consumed with its trailer: the ring is empty again.
  EXPECT_EQ(host.outbound().header().rindex.load(), host.outbound().header().windex.load());
  EXPECT_EQ(host.counters().guest_packets, 1u);
}

TEST_F(Channel, GpaPacketCarriesItsRanges) {
  const netvsc::GpaRange ranges[] = {{100, 24, 0x1234567}, {4096, 0, 0x1234568}};
  const auto nvs = bytes({107, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0});
  ASSERT_TRUE(guest.send_gpa(77, ranges, nvs));
  std::vector<std::vector<uint8_t>> bodies;
  std::vector<netvsc::GpaRange> seen;
  host.poll(10, "test", [&](const netvsc::GuestPacket& p) {
    EXPECT_EQ(p.type, netvsc::kPacketGpa);
    EXPECT_EQ(p.xact_id, 77u);
    seen.assign(p.ranges.begin(), p.ranges.end());
    bodies.emplace_back(p.body.begin(), p.body.end());
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].len, 100u);
  EXPECT_EQ(seen[0].offset, 24u);
  EXPECT_EQ(seen[0].page, 0x1234567u);
  EXPECT_EQ(seen[1].len, 4096u);
  EXPECT_EQ(seen[1].page, 0x1234568u);
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0], nvs);
}

TEST_F(Channel, HostPacketsReachTheGuestWithTrailer) {
  const auto reply = bytes({2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  ASSERT_TRUE(host.send_completion(reply, 0x42));
  const netvsc::RxbufRange ranges[] = {{60, 0x1000}, {1514, 0x2000}};
  const auto rndis = bytes({107, 0, 0, 0, 0, 0, 0, 0});
  ASSERT_TRUE(host.send_rxbuf(0xcafe, ranges, rndis, 3));
  ASSERT_TRUE(host.send_inband(bytes({128, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0}), 0, true));

  GuestRing::Received r;
  ASSERT_TRUE(guest.recv(&r));
  EXPECT_EQ(r.header.type, netvsc::kPacketCompletion);
  EXPECT_EQ(r.header.hlen8, 2u);
  EXPECT_EQ(r.header.flags, 0u);
  EXPECT_EQ(r.header.xact_id, 0x42u);
  EXPECT_EQ(std::vector<uint8_t>(r.data().begin(), r.data().end()), reply);
  EXPECT_EQ(r.trailer, 0u);  // the first packet started at offset 0

  ASSERT_TRUE(guest.recv(&r));
  EXPECT_EQ(r.header.type, netvsc::kPacketRxbuf);
  EXPECT_EQ(r.header.xact_id, 3u);
  // [hdr][u16 id][u16 rsvd][u32 count][ranges]: 16 + 8 + 16 bytes = hlen 5
  EXPECT_EQ(r.header.hlen8, 5u);
  uint16_t id = 0;
  uint32_t count = 0;
  std::memcpy(&id, r.raw.data() + 16, 2);
  std::memcpy(&count, r.raw.data() + 20, 4);
  EXPECT_EQ(id, 0xcafe);
  EXPECT_EQ(count, 2u);
  netvsc::RxbufRange got[2];
  std::memcpy(got, r.raw.data() + 24, sizeof(got));
  EXPECT_EQ(got[1].len, 1514u);
  EXPECT_EQ(got[1].offset, 0x2000u);
  EXPECT_EQ(std::vector<uint8_t>(r.data().begin(), r.data().end()), rndis);
  EXPECT_EQ(r.trailer, uint64_t{32 + 8} << 32);  // started after the 32-byte completion + trailer

  ASSERT_TRUE(guest.recv(&r));
  EXPECT_EQ(r.header.type, netvsc::kPacketInband);
  EXPECT_EQ(r.header.flags, netvsc::kFlagCompletionRequested);
  EXPECT_EQ(r.data().size(), 16u);  // 12 bytes padded to 8
  EXPECT_FALSE(guest.recv(&r));
  EXPECT_EQ(host.counters().host_packets, 3u);
}

TEST_F(Channel, PacketsWrapAroundTheRingEnd) {
  // 200 request/reply round trips of odd sizes through 4 KiB of data per ring.
  for (uint32_t i = 0; i < 200; ++i) {
    std::vector<uint8_t> body(13 + i % 90);
    for (size_t k = 0; k < body.size(); ++k) body[k] = static_cast<uint8_t>(i + k);
    ASSERT_TRUE(guest.send(netvsc::kPacketInband, 0, i, {}, body)) << i;
    unsigned seen = 0;
    host.poll(10, "test", [&](const netvsc::GuestPacket& p) {
      ++seen;
      EXPECT_EQ(p.xact_id, i);
      EXPECT_TRUE(std::equal(body.begin(), body.end(), p.body.begin())) << i;
      EXPECT_TRUE(host.send_completion(p.body.first(body.size()), p.xact_id));
    });
    ASSERT_EQ(seen, 1u) << i;
    GuestRing::Received r;
    ASSERT_TRUE(guest.recv(&r)) << i;
    EXPECT_EQ(r.header.xact_id, i);
    EXPECT_TRUE(std::equal(body.begin(), body.end(), r.data().begin())) << i;
  }
  EXPECT_LT(host.inbound().header().windex.load(), kPageSize);
}

TEST_F(Channel, FullInboundRingRefusesAndWritesNothing) {
  const std::vector<uint8_t> body(1000, 0xab);
  unsigned written = 0;
  while (host.send_inband(body, written, false)) ++written;
  // 4096 bytes of data, 1016 + 8 per packet, one byte always free: three fit.
  EXPECT_EQ(written, 3u);
  const uint32_t windex = host.inbound().header().windex.load();
  EXPECT_FALSE(host.send_inband(body, 99, false));
  EXPECT_EQ(host.inbound().header().windex.load(), windex);
  EXPECT_EQ(host.counters().ring_full, 2u);
  GuestRing::Received r;
  ASSERT_TRUE(guest.recv(&r));
  EXPECT_TRUE(host.send_inband(body, 3, false));
}

TEST_F(Channel, MalformedGuestPacketDropsWhatTheGuestWrote) {
  // hlen 1 (< the 16-byte header), then a good packet that is dropped with it.
  ASSERT_TRUE(guest.send(netvsc::kPacketInband, 0, 1, {}, bytes({1, 2, 3}), 1));
  ASSERT_TRUE(guest.send(netvsc::kPacketInband, 0, 2, {}, bytes({1, 2, 3})));
  unsigned seen = 0;
  testing::internal::CaptureStderr();
  host.poll(10, "netvsc 0 channel 0", [&](const netvsc::GuestPacket&) { ++seen; });
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(seen, 0u);
  EXPECT_EQ(host.counters().malformed_rings, 1u);
  EXPECT_NE(log.find("netvsc 0 channel 0: guest ring malformed (header length"), std::string::npos)
      << log;
  EXPECT_EQ(host.outbound().header().rindex.load(), host.outbound().header().windex.load());
  // The ring works again for what comes after.
  ASSERT_TRUE(guest.send(netvsc::kPacketInband, 0, 3, {}, bytes({1})));
  host.poll(10, "test", [&](const netvsc::GuestPacket& p) { seen += p.xact_id == 3; });
  EXPECT_EQ(seen, 1u);
}

TEST_F(Channel, GpaCountBeyondTheHeaderIsMalformed) {
  const netvsc::GpaRange ranges[] = {{100, 0, 5}};
  std::vector<uint8_t> extra(8 + sizeof(ranges), 0);
  const uint32_t lie = 9;
  std::memcpy(extra.data() + 4, &lie, 4);
  std::memcpy(extra.data() + 8, ranges, sizeof(ranges));
  ASSERT_TRUE(guest.send(netvsc::kPacketGpa, 1, 5, extra, bytes({107, 0, 0, 0})));
  unsigned seen = 0;
  testing::internal::CaptureStderr();
  host.poll(10, "test", [&](const netvsc::GuestPacket&) { ++seen; });
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(seen, 0u);
  EXPECT_EQ(host.counters().malformed_rings, 1u);
}

TEST(GuestMemory, PageNumbersAreAddressesWithoutDpdkAndTranslatedWithIt) {
  alignas(kPageSize) static uint8_t pages[3 * kPageSize];
  std::vector<uint8_t> rx(64), tx(32);
  SharedGuestMemory memory(0x101, rx, 0x102, tx);
  memory.set_translator(nullptr);
  EXPECT_EQ(memory.receive_buffer_gpadl(), 0x101u);
  EXPECT_EQ(memory.send_buffer().size(), 32u);
  const uint64_t page = reinterpret_cast<uintptr_t>(pages) / kPageSize;
  auto span = memory.guest_range(page, 100, 200);
  EXPECT_EQ(span.data(), pages + 100);
  EXPECT_EQ(span.size(), 200u);
  EXPECT_TRUE(memory.guest_range(uint64_t{1} << 60, 0, 8).empty());

  // IOVA-as-PA: IOVA 0x5000.. is `pages`; anything else is not guest memory.
  static uint8_t* base = pages;
  memory.set_translator([](uint64_t iova) -> void* {
    return iova >= 0x5000 && iova < 0x5000 + sizeof(pages) ? base + (iova - 0x5000) : nullptr;
  });
  EXPECT_EQ(memory.guest_range(5, 8, 16).data(), pages + 8);
  EXPECT_EQ(memory.guest_range(6, 4000, 200).data(), pages + kPageSize + 4000);
  EXPECT_TRUE(memory.guest_range(9, 0, 16).empty());
  EXPECT_TRUE(memory.guest_range(7, 4000, 200).empty());  // runs off the translated memory
}

}  // namespace
}  // namespace mana::emu::vmbus
