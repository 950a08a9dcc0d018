// SPDX-License-Identifier: BSD-3-Clause
// TCP segmentation of a TSO WQE (doc/hardware.md §4.11, doc/emulator.md "TSO"): the packet the
// driver gathered (headers in SGE 0, payload after) becomes MSS-sized frames, each with the headers
// replicated and fixed up as a NIC's segmentation does.
#pragma once

#include <cstdint>

namespace mana::emu {

struct TsoRequest {
  uint32_t header_len = 0;        // SGE 0's size (= last_vbytes): Ethernet to TCP options
  uint32_t mss = 0;               // client_data_unit
  uint32_t transport_offset = 0;  // the OOB's trans_off: where the TCP header starts
  bool is_ipv4 = false;           // else IPv6 (the OOB's is_outer_ipv4 / is_outer_ipv6)
  bool fixed_ip_id = false;       // hw tso-ip-id=fixed: every IPv4 segment keeps the header's id
};

// The largest packet a TSO WQE may carry (the Linux driver's 64 KiB GSO limit).
inline constexpr uint32_t kMaxTsoPacket = 65536;

// True when `pkt` (`len` bytes) has headers the request can segment: Ethernet (with at most one
// tag), IPv4 with its IHL or IPv6 up to the transport offset, TCP whose data offset ends exactly at
// `header_len`, a nonzero MSS.
bool tso_headers_ok(const uint8_t* pkt, uint32_t len, const TsoRequest& r);

// Segments of a packet of `len` bytes (at least one, also with no payload).
uint32_t tso_segment_count(uint32_t len, const TsoRequest& r);

// The longest segment's length: the MTU check applies to it.
uint32_t tso_max_segment_len(uint32_t len, const TsoRequest& r);

// Writes segment `index` into `out` (room for tso_max_segment_len bytes) and returns its length:
// the headers with IPv4 total length, id (+index unless fixed) and header checksum, or IPv6 payload
// length; TCP sequence number + index * MSS, FIN and PSH only on the last segment, CWR only on the
// first; the TCP checksum completed from the pseudo-header seed (without length) the field holds.
uint32_t tso_build_segment(const uint8_t* pkt, uint32_t len, const TsoRequest& r, uint32_t index,
                           uint8_t* out);

}  // namespace mana::emu
