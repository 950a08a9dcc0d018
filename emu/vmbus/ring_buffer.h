// SPDX-License-Identifier: BSD-3-Clause
// The host's side of one VMBus ring buffer (doc/hardware.md §11.2): a header page, then `dsize`
// bytes of data used as a circular buffer. Each packet is a 16-byte channel packet header, its
// payload padded to 8 bytes, then an 8-byte trailer; `windex`/`rindex` are byte offsets into the
// data. The guest writes the outbound ring (RingReader reads it) and reads the inbound ring
// (RingWriter fills it).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "netvsc/host_interface.h"

namespace mana::emu::vmbus {

inline constexpr size_t kPageSize = 4096;
// The packet's length fields count 8-byte units; the trailer follows every packet.
inline constexpr uint32_t kPacketAlign = 8;
inline constexpr uint32_t kTrailerSize = 8;

// The header page's start, as the guest (DPDK's struct vmbus_bufring, Linux's hv_ring_buffer)
// reads it.
struct RingHeader {
  std::atomic<uint32_t> windex;
  std::atomic<uint32_t> rindex;
  std::atomic<uint32_t> imask;  // 1: the reading side asks the writer not to signal
  std::atomic<uint32_t> pending_send;
  uint32_t reserved[12];
  uint32_t feature_bits;  // bit 0: pending_send is honoured (left 0: this host polls)
};
static_assert(sizeof(RingHeader) == 68);
static_assert(offsetof(RingHeader, feature_bits) == 64);

// The channel packet header (DPDK's struct vmbus_chanpkt_hdr).
struct ChannelPacketHeader {
  uint16_t type;
  uint16_t hlen8;  // header length (with type-specific fields), in 8-byte units, >= 2
  uint16_t tlen8;  // total length without the trailer, in 8-byte units
  uint16_t flags;
  uint64_t xact_id;
};
static_assert(sizeof(ChannelPacketHeader) == 16);

// One half of a channel's ring area: [header page][data].
class RingView {
 public:
  RingView() = default;
  // `half`: the header page plus the data, at least two pages.
  explicit RingView(std::span<uint8_t> half);
  RingHeader& header() const { return *reinterpret_cast<RingHeader*>(base_); }
  uint32_t dsize() const { return dsize_; }
  bool valid() const { return base_ != nullptr; }
  // A fresh ring: both indexes 0, `imask` as given (uio_hv_generic masks the guest's inbound
  // interrupt at open).
  void reset(uint32_t imask) const;
  // Copies out of / into the data area at `index`, wrapping; returns the index after the copy.
  uint32_t copy_out(uint32_t index, void* dst, uint32_t len) const;
  uint32_t copy_in(uint32_t index, const void* src, uint32_t len) const;

 private:
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
  uint32_t dsize_ = 0;
};

// Reads the guest's packets from its outbound ring.
class RingReader {
 public:
  // The largest packet (without trailer) this host takes; a bigger one is malformed.
  static constexpr uint32_t kMaxPacket = 64 * 1024;
  static constexpr uint32_t kMaxRanges = 256;

  enum class Result { kEmpty, kPacket, kMalformed };

  explicit RingReader(RingView ring) : ring_(ring) {}
  // Decodes the next packet into `out` (its spans point into this reader's scratch, valid until
  // the next call) and consumes it. kMalformed: the ring's contents cannot be trusted, everything
  // the guest wrote so far was dropped and `why` names the reason.
  Result next(netvsc::GuestPacket* out, const char** why);

 private:
  RingView ring_;
  alignas(8) std::array<uint8_t, kMaxPacket> scratch_{};
  std::array<netvsc::GpaRange, kMaxRanges> ranges_{};
};

// Writes host packets into the guest's inbound ring.
class RingWriter {
 public:
  explicit RingWriter(RingView ring) : ring_(ring) {}
  // One packet of `type` whose header part is `header_extra` (after the 16-byte packet header)
  // and whose payload is `body`; false, with nothing written, when the ring lacks room now.
  bool write(uint16_t type, uint16_t flags, uint64_t xact_id, std::span<const uint8_t> header_extra,
             std::span<const uint8_t> body);

 private:
  RingView ring_;
};

}  // namespace mana::emu::vmbus
