// SPDX-License-Identifier: BSD-3-Clause
// A guest that speaks NVSP and RNDIS as DPDK 22.11's net_netvsc does (hn_nvs.c, hn_rndis.c,
// hn_rxtx.c; doc/hardware.md §11.3-§11.9): requests sent the way it sends them, every reply field
// checked the way it checks them (a failed check is a test failure naming the field).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fake_vmbus.h"
#include "netvsc/netvsp_host.h"

namespace mana::emu::netvsc::test {

struct RxFrame {
  unsigned channel;
  uint64_t section;
  std::vector<uint8_t> data;
  std::optional<uint32_t> csum_info, hash_value, hash_info;
};
struct TxDone {
  unsigned channel;
  uint64_t xact_id;
  uint32_t status;
};

class DpdkGuest {
 public:
  DpdkGuest(NetvspHost& host, FakeMemory& mem, FakeHooks& hooks)
      : host_(host), mem_(mem), hooks_(hooks) {}

  // __hn_nvs_execute: INBAND with "completion requested", xactid 0, on the primary channel; the
  // reply must be of type `expected` and at least `resp_len` bytes; RNDIS (acked) and TXTBL
  // packets before it are skipped. Empty when the check failed (reported).
  std::vector<uint8_t> nvs_execute(std::span<const uint8_t> req, uint32_t expected,
                                   size_t resp_len);
  // hn_nvs_req_send: INBAND, no flags, no reply.
  void nvs_send(std::span<const uint8_t> req);
  // The probe of eth_hn_dev_init (notes §2.1, steps 2-12) with every check DPDK makes. Returns the
  // NVS version negotiated (0 on failure).
  uint32_t probe();
  // RNDIS control (hn_rndis_exec1): the message in one guest page, a GPA packet; then the primary
  // channel is polled until the completion with its rid arrives (empty when it never does).
  std::vector<uint8_t> rndis_exec(std::vector<uint8_t> msg, bool expect_reply = true);
  // hn_rndis_query / hn_rndis_set with their checks; `odlen` is the guest's output size.
  std::optional<std::vector<uint8_t>> rndis_query(uint32_t oid, std::span<const uint8_t> in,
                                                  uint32_t odlen);
  bool rndis_set(uint32_t oid, std::span<const uint8_t> data);
  // hn_nvs_alloc_subchans, then hn_rndis_conf_rss (disable, then enable with table i % queues).
  bool configure_queues(unsigned queues, const std::array<uint8_t, 40>& key, uint32_t hash_types);
  void set_datapath(uint32_t path);  // hn_nvs_set_datapath: INBAND, no flags

  // TX as hn_xmit_pkts: `frames` aggregated into chimney section `section` (RNDIS packets aligned
  // to 8) in one INBAND packet; or one frame by GPA (header range + data ranges split at pages).
  void send_chimney(unsigned channel, uint32_t section,
                    const std::vector<std::vector<uint8_t>>& frames, uint64_t xact_id,
                    std::span<const uint32_t> csum_info = {});
  void send_gpa(unsigned channel, std::span<const uint8_t> frame, uint64_t xact_id,
                std::optional<uint32_t> csum_info = {}, std::optional<uint32_t> vlan_info = {},
                uint32_t data_page_offset = 4000, std::optional<uint32_t> lso_info = {});

  // hn_process_events on one channel: completions, RXBUF packets (acked unless holding), notes.
  void process_events(unsigned channel);
  void poll_all();  // host poll + every channel's events

  bool poll_between = false;   // the device thread's poll() around every NVS request
  bool hold_sections = false;  // keep RXBUF sections instead of acking them
  std::vector<std::pair<unsigned, uint64_t>> held;
  void ack(unsigned channel, uint64_t section);

  std::vector<RxFrame> rx;
  std::vector<TxDone> tx_done;
  std::vector<HostPacket> notes;              // INBAND packets from the host
  std::vector<uint32_t> indications;          // RNDIS status indications
  std::vector<HostPacket> other_completions;  // completions that are not RNDIS_ACK
  uint32_t rxbuf_section_count = 0, rxbuf_section_size = 0, chimney_section_size = 0;
  uint32_t agg_align = 0, agg_pkts = 0;
  // NDIS_CONF's MTU in the probe: 1514, or the new MTU + 14 after DPDK 24.11's mtu_set (hn_attach).
  uint32_t ndis_mtu = 1514;
  // Notes received before the last RNDIS answer: the ones DPDK acts on while it waits for it.
  size_t notes_at_reply = 0;
  std::array<uint8_t, 6> mac{};
  uint32_t max_queues = 0;

 private:
  std::vector<uint8_t> pending_rndis_;
  uint32_t pending_rid_ = 0, next_rid_ = 0;
  NetvspHost& host_;
  FakeMemory& mem_;
  FakeHooks& hooks_;
  std::vector<uint8_t> oid_request(uint32_t type, uint32_t oid, std::span<const uint8_t> info,
                                   uint32_t* rid);
  void rndis_receive(unsigned channel, uint64_t section, std::span<const uint8_t> msg);
};

// A frame of `len` bytes to `dst` from `src` with an IPv4/TCP header and the given ports.
std::vector<uint8_t> tcp_frame(const std::array<uint8_t, 6>& dst, uint16_t sport, uint16_t dport,
                               uint32_t len = 128);

}  // namespace mana::emu::netvsc::test
