// SPDX-License-Identifier: BSD-3-Clause
// Steady-state forwarding on the emulator in lockstep mode: tx_burst of a burst, the device model
// run to idle (mana_emu_step: TX WQEs -> loop wire -> RX WQEs, completions), rx_burst of the
// frames that came back, which are sent again; with several queues and ports (--queues, --ports)
// a step sends one burst on every TX queue of every port and receives each on the RX queue of the
// same index, where RSS puts it. Only the PMD calls are between the rdtsc reads:
// rte_eth_tx_prepare + rte_eth_tx_burst, and rte_eth_rx_burst (bench_tx / bench_rx, kept out of
// line so that callgrind can collect exactly them: scripts/bench-cost.sh --callgrind).
#include "round.h"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <filesystem>
#include <vector>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_thash.h>
#include <rte_udp.h>

#include "round_result.h"

namespace mana_bench {

namespace {

constexpr uint32_t kSrcIp = 0xc6120001;  // 198.18.0.1
constexpr uint32_t kDstIp = 0xc6120002;
constexpr uint16_t kFirstSrcPort = 1024;  // one queue's frames: always this source port
constexpr uint16_t kDstPort = 9;
// The benchmark's own RSS key (any 40 bytes): set on every driver, so that the benchmark can
// compute where each frame lands (DPDK 22.11's net_mana ignores rte_eth_conf's key and reports
// none until rte_eth_dev_rss_hash_update sets one).
constexpr uint8_t kRssKey[40] = {0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
                                 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
                                 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
                                 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};
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
extern "C" __attribute__((noinline)) uint16_t bench_tx(uint16_t port, uint16_t queue,
                                                       rte_mbuf** pkts, uint16_t n) {
  const uint16_t ok = g_prepare ? rte_eth_tx_prepare(port, queue, pkts, n) : n;
  return rte_eth_tx_burst(port, queue, pkts, ok);
}

extern "C" __attribute__((noinline)) uint16_t bench_rx(uint16_t port, uint16_t queue,
                                                       rte_mbuf** pkts, uint16_t n) {
  return rte_eth_rx_burst(port, queue, pkts, n);
}

namespace {

// One port of the round: its MAC and each queue's UDP source port (index: the queue).
struct Port {
  uint16_t id = 0;
  rte_ether_addr mac{};
  std::vector<uint16_t> src_ports;
};

// An IPv4/UDP frame from the port to itself (the loop wire brings it back; the source MAC passes
// the emulator's anti-spoofing check).
void write_frame(rte_mbuf* m, const rte_ether_addr& mac, uint16_t len, bool offloads,
                 uint16_t src_port) {
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
  ip->src_addr = rte_cpu_to_be_32(kSrcIp);
  ip->dst_addr = rte_cpu_to_be_32(kDstIp);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  udp->src_port = rte_cpu_to_be_16(src_port);
  udp->dst_port = rte_cpu_to_be_16(kDstPort);
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

// The reason the driver cannot run the round's queue count, or "".
std::string too_many_queues(uint16_t port, const RoundConfig& c) {
  rte_eth_dev_info info;
  if (rte_eth_dev_info_get(port, &info) != 0) return "";
  if (info.max_rx_queues < c.queues || info.max_tx_queues < c.queues)
    return "the driver offers " + std::to_string(info.max_rx_queues) + " RX and " +
           std::to_string(info.max_tx_queues) + " TX queues";
  return "";
}

// c.queues RX and TX queues, started; "" or what failed. Several queues: RSS on IP and UDP with
// the benchmark's key.
std::string configure(uint16_t port, const RoundConfig& c, rte_mempool* pool) {
  rte_eth_dev_info info;
  if (rte_eth_dev_info_get(port, &info) != 0) return "rte_eth_dev_info_get failed";
  rte_eth_conf conf{};
  rte_eth_rss_conf rss{};
  rss.rss_key = const_cast<uint8_t*>(kRssKey);
  rss.rss_key_len = sizeof(kRssKey);
  rss.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
  if (c.offloads || c.queues > 1) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = rss.rss_hf;
  }
  if (c.queues > 1) conf.rx_adv_conf.rss_conf = rss;
  if (c.offloads) {
    conf.rxmode.offloads = kRxOffloads;
    conf.txmode.offloads = kTxOffloads;
  }
  if (c.fast_free) conf.txmode.offloads |= info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
  if (int rc = rte_eth_dev_configure(port, c.queues, c.queues, &conf); rc != 0)
    return "rte_eth_dev_configure: " + std::string(strerror(-rc));
  // DPDK 22.11's net_mana takes the key and hash types from this call only.
  if (c.queues > 1) {
    if (int rc = rte_eth_dev_rss_hash_update(port, &rss); rc != 0)
      return "rte_eth_dev_rss_hash_update: " + std::string(strerror(-rc));
  }
  for (uint16_t q = 0; q < c.queues; q++) {
    if (int rc = rte_eth_rx_queue_setup(port, q, c.ring, rte_socket_id(), nullptr, pool); rc != 0)
      return "rte_eth_rx_queue_setup: " + std::string(strerror(-rc));
    if (int rc = rte_eth_tx_queue_setup(port, q, c.ring, rte_socket_id(), nullptr); rc != 0)
      return "rte_eth_tx_queue_setup: " + std::string(strerror(-rc));
  }
  // As testpmd does unless told otherwise: the application needs no packet types.
  if (c.no_ptypes) {
    if (int rc = rte_eth_dev_set_ptypes(port, RTE_PTYPE_UNKNOWN, nullptr, 0); rc != 0)
      return "rte_eth_dev_set_ptypes: " + std::string(strerror(-rc));
  }
  if (int rc = rte_eth_dev_start(port); rc != 0)
    return "rte_eth_dev_start: " + std::string(strerror(-rc));
  return "";
}

// Each queue's UDP source port: the first from kFirstSrcPort on whose RSS hash (DPDK's software
// Toeplitz over the IPv4/UDP 4-tuple, with the key and RETA the port reports) selects that
// queue. A driver without rte_eth_dev_rss_reta_query (DPDK 22.11's net_mana) spreads its
// indirection table round robin; forward() checks every frame's queue either way.
std::string steer(uint16_t port, const RoundConfig& c, std::vector<uint16_t>* src_ports) {
  src_ports->assign(c.queues, kFirstSrcPort);
  if (c.queues == 1) return "";
  uint8_t key[64] = {};
  rte_eth_rss_conf rss{};
  rss.rss_key = key;
  rss.rss_key_len = sizeof(key);
  if (int rc = rte_eth_dev_rss_hash_conf_get(port, &rss); rc != 0)
    return "rte_eth_dev_rss_hash_conf_get: " + std::string(strerror(-rc));
  if (rss.rss_key_len != sizeof(kRssKey) || std::memcmp(key, kRssKey, sizeof(kRssKey)) != 0)
    return "the port reports another RSS key than the one set";
  rte_eth_dev_info info;
  if (rte_eth_dev_info_get(port, &info) != 0 || info.reta_size == 0) return "no RETA size";
  std::vector<rte_eth_rss_reta_entry64> reta((info.reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) /
                                             RTE_ETH_RETA_GROUP_SIZE);
  for (auto& group : reta) group.mask = ~0ULL;
  const int rc = rte_eth_dev_rss_reta_query(port, reta.data(), info.reta_size);
  if (rc != 0 && rc != -ENOTSUP) return "rte_eth_dev_rss_reta_query: " + std::string(strerror(-rc));
  auto queue_of = [&](uint32_t hash) -> uint16_t {
    const uint32_t i = hash % info.reta_size;
    if (rc != 0) return static_cast<uint16_t>(i % c.queues);
    return reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
  };
  std::vector<bool> found(c.queues, false);
  unsigned left = c.queues;
  for (uint32_t sport = kFirstSrcPort; sport <= UINT16_MAX && left > 0; sport++) {
    rte_ipv4_tuple t{};
    t.src_addr = kSrcIp;
    t.dst_addr = kDstIp;
    t.sport = static_cast<uint16_t>(sport);
    t.dport = kDstPort;
    const uint16_t q =
        queue_of(rte_softrss(reinterpret_cast<uint32_t*>(&t), RTE_THASH_V4_L4_LEN, kRssKey));
    if (q < c.queues && !found[q]) {
      found[q] = true;
      (*src_ports)[q] = static_cast<uint16_t>(sport);
      left--;
    }
  }
  return left == 0 ? "" : "no UDP source port reaches every RX queue through the RETA";
}

// False (and why on stderr) unless every frame of RX queue `queue` of `p` is one that TX queue
// sent on that port (RSS put it there) and, with `offloads`, arrived with good checksums.
bool check_landing(const Port& p, uint16_t queue, rte_mbuf* const* pkts, uint16_t n,
                   bool offloads) {
  // With checksum offloads the NIC completed both checksums from the driver's pseudo-header seed:
  // a wrong seed arrives as a bad UDP checksum.
  constexpr uint64_t kGood = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
  for (uint16_t i = 0; i < n; i++) {
    const uint64_t cksum =
        pkts[i]->ol_flags & (RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK);
    if (offloads && cksum != kGood) {
      std::fprintf(stderr,
                   "mana_cost_bench: port %u RX queue %u received a frame whose checksums are not "
                   "both good (ol_flags %#" PRIx64 "): the TX checksum offload went wrong\n",
                   p.id, queue, pkts[i]->ol_flags);
      return false;
    }
    const auto* eth = rte_pktmbuf_mtod(pkts[i], const rte_ether_hdr*);
    const auto* udp = reinterpret_cast<const rte_udp_hdr*>(
        reinterpret_cast<const uint8_t*>(eth + 1) + sizeof(rte_ipv4_hdr));
    const uint16_t sport = rte_be_to_cpu_16(udp->src_port);
    if (!rte_is_same_ether_addr(&eth->src_addr, &p.mac) || sport != p.src_ports[queue]) {
      std::fprintf(stderr,
                   "mana_cost_bench: port %u RX queue %u received a frame with UDP source port %u "
                   "(its TX queue's: %u), or from another port: RSS put it on the wrong queue\n",
                   p.id, queue, sport, p.src_ports[queue]);
      return false;
    }
  }
  return true;
}

// Runs the device model until it has nothing left to do; false if it never goes idle.
bool settle_device(StepFn step) {
  for (unsigned i = 0; i < kMaxStepsPerBurst; i++)
    if (step() == 0) return true;
  return false;
}

// Forwards until `packets` have gone round (both directions, all queues of all ports), adding the
// PMD cycles to `t`. `check` (not net_null): every frame comes back on its own RX queue.
bool forward(const std::vector<Port>& ports, const RoundConfig& c, rte_mempool* pool, StepFn step,
             bool check, uint64_t packets, Totals* t) {
  // pkts[port][queue]: the frames of that TX queue; n and sent, their counts.
  const size_t lanes = ports.size() * c.queues;
  std::vector<std::vector<rte_mbuf*>> pkts(lanes, std::vector<rte_mbuf*>(c.burst));
  std::vector<uint16_t> n(lanes, 0), sent(lanes, 0);
  const uint16_t len = c.frame_bytes - kFcsBytes;
  while (t->rx_packets < packets) {
    for (size_t l = 0; l < lanes; l++) {
      const Port& p = ports[l / c.queues];
      const auto q = static_cast<uint16_t>(l % c.queues);
      for (; n[l] < c.burst; n[l]++) {  // top up: the first burst, and any frame the wire lost
        rte_mbuf* m = rte_pktmbuf_alloc(pool);
        if (m == nullptr) return fail("out of mbufs") == 0;
        write_frame(m, p.mac, len, c.offloads, p.src_ports[q]);
        pkts[l][n[l]] = m;
      }
      for (uint16_t i = 0; i < n[l]; i++) mark_tx(pkts[l][i], c.offloads);
      if (c.prepare == RoundConfig::Prepare::kApart &&
          rte_eth_tx_prepare(p.id, q, pkts[l].data(), n[l]) != n[l])
        return fail("rte_eth_tx_prepare refused a packet") == 0;
      const uint64_t t0 = rte_rdtsc();
      sent[l] = bench_tx(p.id, q, pkts[l].data(), n[l]);
      const uint64_t t1 = rte_rdtsc();
      t->tx_cycles += t1 - t0;
      t->tx_packets += sent[l];
      if (sent[l] != n[l]) rte_pktmbuf_free_bulk(pkts[l].data() + sent[l], n[l] - sent[l]);
      // With --doorbell poll all SQs (RQs) of a port share one doorbell slot: the device samples
      // each burst's doorbell before the next queue's overwrites it (doc/emulator.md "Lockstep").
      if (!settle_device(step)) return fail("the emulated device never went idle") == 0;
    }
    for (size_t l = 0; l < lanes; l++) {
      const Port& p = ports[l / c.queues];
      const auto q = static_cast<uint16_t>(l % c.queues);
      const uint64_t t0 = rte_rdtsc();
      n[l] = bench_rx(p.id, q, pkts[l].data(), c.burst);
      const uint64_t t1 = rte_rdtsc();
      t->rx_cycles += t1 - t0;
      t->rx_packets += n[l];
      // Lockstep on a loop wire: every frame sent is back before rx_burst, so the RX and TX
      // figures cover the same packets.
      if (n[l] != sent[l]) {
        std::fprintf(stderr, "mana_cost_bench: port %u queue %u sent %u frames, received %u\n",
                     p.id, q, sent[l], n[l]);
        return false;
      }
      if (check && !check_landing(p, q, pkts[l].data(), n[l], c.offloads)) return false;
      if (!settle_device(step))
        return fail("the emulated device never went idle") == 0;  // RQ refill
    }
  }
  for (size_t l = 0; l < lanes; l++) rte_pktmbuf_free_bulk(pkts[l].data(), n[l]);
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
  if (c.simd_bitwidth != 0)
    args.push_back("--force-max-simd-bitwidth=" + std::to_string(c.simd_bitwidth));
  const bool vdev = c.pmd.starts_with(kVdevPrefix);
  if (vdev) {  // DPDK's own vdev (net_null): the emulated VF unused
    args.push_back("--no-pci");
    for (uint16_t p = 0; p < c.ports; p++)
      args.insert(args.end(), {"--vdev", c.pmd.substr(kVdevPrefix.size()) + std::to_string(p)});
  } else {
    args.insert(args.end(), {"-d", c.pmd});
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0)
    return fail("cannot initialise DPDK's EAL");
  int status = 0;
  std::vector<Port> ports;
  uint16_t id = 0;
  RTE_ETH_FOREACH_DEV(id) ports.push_back({id, {}, {}});
  // A per-lcore cache as applications have (testpmd's 250): a driver that allocates one mbuf at
  // a time is not charged for the ring behind the cache. Enough mbufs for every queue's RX ring,
  // TX ring and bursts (one queue: the 4095 of the first version).
  const unsigned mbufs = std::max(4095u, c.ports * c.queues * (2u * c.ring + 2u * c.burst) + 1024u);
  rte_mempool* pool =
      rte_pktmbuf_pool_create("bench", mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
  std::string why, error;
  if (ports.size() != c.ports) {
    status = fail(c.ports == 1 ? "expected exactly one port (the emulated VF)"
                               : "expected as many ports as --ports (mana-emu run --ports N)");
  } else if (pool == nullptr) {
    status = fail("no mbuf pool");
  } else {
    for (Port& p : ports) {
      if (rte_eth_macaddr_get(p.id, &p.mac) != 0) error = "no MAC address";
      if (error.empty() && why.empty()) why = unsupported(p.id, c);
      if (error.empty() && why.empty()) why = too_many_queues(p.id, c);
      if (error.empty() && why.empty()) error = configure(p.id, c, pool);
      if (error.empty() && why.empty() && !vdev) error = steer(p.id, c, &p.src_ports);
      if (vdev) p.src_ports.assign(c.queues, kFirstSrcPort);
    }
    if (!error.empty()) {
      status = fail(error.c_str());
    } else if (!why.empty()) {
      status = not_applicable(why);
    } else if (!settle_device(step)) {
      // The starts' doorbells (every RQ's at once, trapped: doc/emulator.md "Lockstep") reach the
      // device, whose doorbell pages are sampled from then on, before the first burst.
      status = fail("the emulated device never went idle after the ports started");
    } else {
      Totals warm, t;
      const uint64_t per_step = uint64_t{c.burst} * c.queues * c.ports;
      if (!forward(ports, c, pool, step, !vdev, c.packets / 4 + per_step, &warm) ||
          !forward(ports, c, pool, step, !vdev, c.packets, &t)) {
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
    }
  }
  for (const Port& p : ports) {
    rte_eth_dev_stop(p.id);
    rte_eth_dev_close(p.id);
  }
  // The EAL leaves its runtime folder (config, fbarrays) behind; this round's prefix is its own.
  const std::string runtime_dir = rte_eal_get_runtime_dir();
  rte_eal_cleanup();
  std::error_code ignored;
  std::filesystem::remove_all(runtime_dir, ignored);
  return status;
}

}  // namespace mana_bench
