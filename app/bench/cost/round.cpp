// SPDX-License-Identifier: BSD-3-Clause
// Steady-state forwarding on the emulator in lockstep mode: tx_burst of a burst, the device model
// run to idle (mana_emu_step: TX WQEs -> loop wire -> RX WQEs, completions), rx_burst of the
// frames that came back, which are sent again. Only the PMD calls are between the rdtsc reads:
// rte_eth_tx_prepare + rte_eth_tx_burst, and rte_eth_rx_burst (bench_tx / bench_rx, kept out of
// line so that callgrind can collect exactly them: scripts/bench-cost.sh --callgrind).
#include "round.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "round_result.h"

namespace mana_bench {

namespace {

constexpr uint16_t kRingSize = 256;  // within every emulator limit (--limits 6.2)
constexpr uint16_t kFcsBytes = 4;
constexpr unsigned kMaxStepsPerBurst = 1000;  // a device that never goes idle is a bug
constexpr uint64_t kRxOffloads = RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH;
constexpr uint64_t kTxOffloads = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
using StepFn = int (*)();
const std::string kVdevPrefix = "vdev:";  // --pmd vdev:net_null: a driver DPDK builds in

struct Totals {
  uint64_t rx_cycles = 0, tx_cycles = 0, rx_packets = 0, tx_packets = 0;
};

}  // namespace

namespace {
bool g_prepare = true;  // rte_eth_tx_prepare inside bench_tx (the round's --prepare on)
}  // namespace

// Out of line and with C names: the callgrind toggles of scripts/bench-cost.sh.
extern "C" __attribute__((noinline)) uint16_t bench_tx(uint16_t port, rte_mbuf** pkts, uint16_t n) {
  const uint16_t ok = g_prepare ? rte_eth_tx_prepare(port, 0, pkts, n) : n;
  return rte_eth_tx_burst(port, 0, pkts, ok);
}

extern "C" __attribute__((noinline)) uint16_t bench_rx(uint16_t port, rte_mbuf** pkts, uint16_t n) {
  return rte_eth_rx_burst(port, 0, pkts, n);
}

namespace {

// An IPv4/UDP frame from the port to itself (the loop wire brings it back; the source MAC passes
// the emulator's anti-spoofing check).
void write_frame(rte_mbuf* m, const rte_ether_addr& mac, uint16_t len, bool offloads) {
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  eth->dst_addr = mac;
  eth->src_addr = mac;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  std::memset(ip, 0, sizeof(*ip));
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->total_length = rte_cpu_to_be_16(len - sizeof(rte_ether_hdr));
  ip->time_to_live = 64;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(0xc6120001);  // 198.18.0.1
  ip->dst_addr = rte_cpu_to_be_32(0xc6120002);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  udp->src_port = rte_cpu_to_be_16(1024);
  udp->dst_port = rte_cpu_to_be_16(9);
  udp->dgram_len = rte_cpu_to_be_16(len - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr));
  udp->dgram_cksum = 0;
  std::memset(udp + 1, 0xab, len - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr) - sizeof(*udp));
  m->data_len = len;
  m->pkt_len = len;
  if (!offloads) ip->hdr_checksum = rte_ipv4_cksum(ip);
}

// What the application does to a frame before TX, outside the measurement.
void mark_tx(rte_mbuf* m, bool offloads) {
  m->ol_flags =
      offloads ? RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM : 0;
  m->l2_len = sizeof(rte_ether_hdr);
  m->l3_len = sizeof(rte_ipv4_hdr);
}

int not_applicable(const std::string& why) {
  RoundResult r;
  r.not_applicable = why;
  std::fputs(format_result(r).c_str(), stdout);
  return 0;
}

int fail(const char* what) {
  std::fprintf(stderr, "mana_cost_bench: %s\n", what);
  return 1;
}

// The reason the driver cannot run the configuration (it lacks the offloads), or "".
std::string unsupported(uint16_t port, const RoundConfig& c) {
  rte_eth_dev_info info;
  if (rte_eth_dev_info_get(port, &info) != 0 || !c.offloads) return "";
  if ((info.rx_offload_capa & kRxOffloads) != kRxOffloads)
    return "the driver lacks RX checksum or RSS hash offload";
  if ((info.tx_offload_capa & kTxOffloads) != kTxOffloads)
    return "the driver lacks TX IPv4/UDP checksum offload";
  return "";
}

// One RX and one TX queue, started; "" or what failed.
std::string configure(uint16_t port, const RoundConfig& c, rte_mempool* pool) {
  rte_eth_dev_info info;
  if (rte_eth_dev_info_get(port, &info) != 0) return "rte_eth_dev_info_get failed";
  rte_eth_conf conf{};
  if (c.offloads) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rxmode.offloads = kRxOffloads;
    conf.rx_adv_conf.rss_conf.rss_hf =
        (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
    conf.txmode.offloads = kTxOffloads;
  }
  if (c.fast_free) conf.txmode.offloads |= info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
  if (int rc = rte_eth_dev_configure(port, 1, 1, &conf); rc != 0)
    return "rte_eth_dev_configure: " + std::string(strerror(-rc));
  if (int rc = rte_eth_rx_queue_setup(port, 0, kRingSize, rte_socket_id(), nullptr, pool); rc != 0)
    return "rte_eth_rx_queue_setup: " + std::string(strerror(-rc));
  if (int rc = rte_eth_tx_queue_setup(port, 0, kRingSize, rte_socket_id(), nullptr); rc != 0)
    return "rte_eth_tx_queue_setup: " + std::string(strerror(-rc));
  // As testpmd does unless told otherwise: the application needs no packet types.
  if (c.no_ptypes) {
    if (int rc = rte_eth_dev_set_ptypes(port, RTE_PTYPE_UNKNOWN, nullptr, 0); rc != 0)
      return "rte_eth_dev_set_ptypes: " + std::string(strerror(-rc));
  }
  if (int rc = rte_eth_dev_start(port); rc != 0)
    return "rte_eth_dev_start: " + std::string(strerror(-rc));
  return "";
}

// Runs the device model until it has nothing left to do; false if it never goes idle.
bool settle_device(StepFn step) {
  for (unsigned i = 0; i < kMaxStepsPerBurst; i++)
    if (step() == 0) return true;
  return false;
}

// Forwards until `packets` have gone round (both directions), adding the PMD cycles to `t`.
bool forward(uint16_t port, const RoundConfig& c, rte_mempool* pool, const rte_ether_addr& mac,
             StepFn step, uint64_t packets, Totals* t) {
  std::vector<rte_mbuf*> pkts(c.burst);
  uint16_t n = 0;
  const uint16_t len = c.frame_bytes - kFcsBytes;
  while (t->rx_packets < packets) {
    for (; n < c.burst; n++) {  // top up: the first burst, and any frame the wire lost
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      if (m == nullptr) return fail("out of mbufs") == 0;
      write_frame(m, mac, len, c.offloads);
      pkts[n] = m;
    }
    for (uint16_t i = 0; i < n; i++) mark_tx(pkts[i], c.offloads);
    if (c.prepare == RoundConfig::Prepare::kApart &&
        rte_eth_tx_prepare(port, 0, pkts.data(), n) != n)
      return fail("rte_eth_tx_prepare refused a packet") == 0;
    uint64_t t0 = rte_rdtsc();
    const uint16_t sent = bench_tx(port, pkts.data(), n);
    uint64_t t1 = rte_rdtsc();
    t->tx_cycles += t1 - t0;
    t->tx_packets += sent;
    if (sent != n) rte_pktmbuf_free_bulk(pkts.data() + sent, n - sent);
    if (!settle_device(step)) return fail("the emulated device never went idle") == 0;
    t0 = rte_rdtsc();
    n = bench_rx(port, pkts.data(), c.burst);
    t1 = rte_rdtsc();
    t->rx_cycles += t1 - t0;
    t->rx_packets += n;
    // Lockstep on a loop wire: every frame sent is back before rx_burst, so the RX and TX
    // figures cover the same packets.
    if (n != sent) {
      std::fprintf(stderr, "mana_cost_bench: sent %u frames, received %u\n", sent, n);
      return false;
    }
  }
  rte_pktmbuf_free_bulk(pkts.data(), n);
  return true;
}

}  // namespace

int run_round(const RoundConfig& c) {
  g_prepare = c.prepare == RoundConfig::Prepare::kWith;
  auto step = reinterpret_cast<StepFn>(dlsym(RTLD_DEFAULT, "mana_emu_step"));
  if (step == nullptr || step() < 0)
    return fail(
        "not in lockstep mode: run it as mana-emu run --lockstep ... -- mana_cost_bench --round");
  std::vector<std::string> args = {
      "mana_cost_bench", "-l",          "0",           "--no-huge", "-m", "256",
      "--file-prefix",   c.file_prefix, "--log-level", "*:error"};
  if (c.pmd.starts_with(kVdevPrefix)) {  // DPDK's own vdev (net_null): the emulated VF unused
    args.insert(args.end(), {"--no-pci", "--vdev", c.pmd.substr(kVdevPrefix.size()) + "0"});
  } else {
    args.insert(args.end(), {"-d", c.pmd});
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0)
    return fail("cannot initialise DPDK's EAL");
  int status = 0;
  uint16_t port = 0;
  if (rte_eth_dev_count_avail() != 1) {
    status = fail("expected exactly one port (the emulated VF)");
  } else {
    uint16_t p = 0;
    RTE_ETH_FOREACH_DEV(p) port = p;
    // A per-lcore cache as applications have (testpmd's 250): a driver that allocates one mbuf at
    // a time is not charged for the ring behind the cache.
    rte_mempool* pool =
        rte_pktmbuf_pool_create("bench", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
    rte_ether_addr mac;
    if (pool == nullptr || rte_eth_macaddr_get(port, &mac) != 0) {
      status = fail("no mbuf pool or no MAC address");
    } else if (const std::string why = unsupported(port, c); !why.empty()) {
      status = not_applicable(why);
    } else if (const std::string error = configure(port, c, pool); !error.empty()) {
      status = fail(error.c_str());
    } else {
      Totals warm, t;
      if (!forward(port, c, pool, mac, step, c.packets / 4 + c.burst, &warm) ||
          !forward(port, c, pool, mac, step, c.packets, &t)) {
        status = 1;
      } else {
        RoundResult r;
        r.measured = true;
        r.rx_cycles = static_cast<double>(t.rx_cycles) / static_cast<double>(t.rx_packets);
        r.tx_cycles = static_cast<double>(t.tx_cycles) / static_cast<double>(t.tx_packets);
        r.packets = t.rx_packets;
        r.all_packets = warm.rx_packets + t.rx_packets;
        std::fputs(format_result(r).c_str(), stdout);
      }
      rte_eth_dev_stop(port);
    }
    rte_eth_dev_close(port);
  }
  // The EAL leaves its runtime folder (config, fbarrays) behind; this round's prefix is its own.
  const std::string runtime_dir = rte_eal_get_runtime_dir();
  rte_eal_cleanup();
  std::error_code ignored;
  std::filesystem::remove_all(runtime_dir, ignored);
  return status;
}

}  // namespace mana_bench
