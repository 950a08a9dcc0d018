// SPDX-License-Identifier: BSD-3-Clause
// mana-mr-stress: TX queues of one port transmitting from mempools created while they run, in a
// primary and a secondary process at once (doc/guide.md "Memory registration"; the test is
// tests/integration/test_mr_cache.py). No DPDK program creates pools while sending, hence this one.
//
//   mana-mr-stress <EAL args> -- --first-queue Q --queues N --pools P [--interval-ms I]
//                  [--emu-ctl PATH]
//
// The primary configures port 0 with 8 TX queues and starts it; each process sends broadcast frames
// on queues [Q, Q + N) from its one worker lcore, while its main lcore creates P pools, one every I
// ms, and hands each to the worker; before each new pool the previous one is freed once all its
// mbufs are back (so the new pool may reuse its memory: stale MRs would show as bad-lkey
// completions). With --emu-ctl it
// asks the emulator how many MRs exist before and after creating each pool (registered before
// first use: the count grew), the two processes taking turns (a lock in a memzone) so that one's
// pool changes do not blur the other's count. At the end it prints
//   mr_stress: done sent=... max_burst_us=... tx_errors=... mr_miss=... late_pools=...
//              undrained_pools=... last_pool_mrs=...
// and a primary then waits for SIGINT/SIGTERM (the secondary needs the port), prints
// `mr_stress: emulator MRs at start N, at end M` and closes the port. The last pools stay.
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <rte_cycles.h>
#include <rte_memzone.h>
#include <rte_spinlock.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

namespace {

constexpr uint16_t kPort = 0;
constexpr uint16_t kTxQueues = 8;
constexpr uint16_t kDesc = 256;
constexpr unsigned kBurst = 32;
constexpr unsigned kPoolSize = 2047;

struct Options {
  unsigned first_queue = 0;
  unsigned queues = 4;
  unsigned pools = 6;
  unsigned interval_ms = 150;
  const char* emu_ctl = nullptr;
};

std::atomic<rte_mempool*> g_pool{nullptr};
std::atomic<rte_mempool*> g_using{nullptr};  // the pool of the worker's current iteration
std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_sent{0}, g_sent_from_last{0};
volatile sig_atomic_t g_signal = 0;
rte_spinlock_t* g_turns = nullptr;  // shared by both processes: pool changes and MR counts
uint64_t g_max_burst_cycles = 0;

[[noreturn]] void die(const char* what) {
  fprintf(stderr, "mr_stress: %s: %s\n", what, rte_strerror(rte_errno));
  exit(1);
}

int parse(int argc, char** argv, Options& o) {
  static const option longs[] = {{"first-queue", required_argument, nullptr, 'q'},
                                 {"queues", required_argument, nullptr, 'n'},
                                 {"pools", required_argument, nullptr, 'p'},
                                 {"interval-ms", required_argument, nullptr, 'i'},
                                 {"emu-ctl", required_argument, nullptr, 'e'},
                                 {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", longs, nullptr)) != -1) {
    switch (c) {
      case 'q':
        o.first_queue = static_cast<unsigned>(atoi(optarg));
        break;
      case 'n':
        o.queues = static_cast<unsigned>(atoi(optarg));
        break;
      case 'p':
        o.pools = static_cast<unsigned>(atoi(optarg));
        break;
      case 'i':
        o.interval_ms = static_cast<unsigned>(atoi(optarg));
        break;
      case 'e':
        o.emu_ctl = optarg;
        break;
      default:
        return -1;
    }
  }
  if (o.queues == 0 || o.first_queue + o.queues > kTxQueues || o.pools == 0) return -1;
  return 0;
}

// The emulator's count of live MRs (all processes), or -1.
long emu_mrs(const char* ctl) {
  if (ctl == nullptr) return -1;
  const std::string cmd = std::string(ctl) + " ctl live 0";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return -1;
  char line[512] = {};
  const bool got = fgets(line, sizeof(line), f) != nullptr;
  pclose(f);
  const char* at = got ? strstr(line, "\"mrs\":") : nullptr;
  return at ? strtol(at + 6, nullptr, 10) : -1;
}

void configure_port() {
  rte_eth_conf conf{};
  if (rte_eth_dev_configure(kPort, 1, kTxQueues, &conf) != 0) die("configure");
  rte_mempool* rx = rte_pktmbuf_pool_create("mrs_rx", 1023, 32, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                            static_cast<int>(rte_socket_id()));
  if (rx == nullptr) die("RX pool");
  if (rte_eth_rx_queue_setup(kPort, 0, kDesc, SOCKET_ID_ANY, nullptr, rx) != 0) die("RX queue");
  for (uint16_t q = 0; q < kTxQueues; q++)
    if (rte_eth_tx_queue_setup(kPort, q, kDesc, SOCKET_ID_ANY, nullptr) != 0) die("TX queue");
  if (rte_eth_dev_start(kPort) != 0) die("start");
}

void fill_frame(rte_mbuf* m, const rte_ether_addr& src) {
  m->data_len = 60;
  m->pkt_len = 60;
  uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
  memset(frame, 0, 60);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(frame);
  memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
  eth->src_addr = src;
  eth->ether_type = rte_cpu_to_be_16(0x88B5);  // local experimental EtherType
}

// Frees the mbufs of completed sends on this process's queues: an empty burst reclaims
// (rte_eth_tx_done_cleanup is not offered to secondary processes).
void reclaim(const Options& o) {
  for (unsigned q = o.first_queue; q < o.first_queue + o.queues; q++)
    rte_eth_tx_burst(kPort, static_cast<uint16_t>(q), nullptr, 0);
}

int worker(void* arg) {
  const Options& o = *static_cast<const Options*>(arg);
  rte_ether_addr src;
  rte_eth_macaddr_get(kPort, &src);
  rte_mbuf* bufs[kBurst];
  for (unsigned i = 0; !g_stop.load(std::memory_order_relaxed); i++) {
    rte_mempool* mp = g_pool.load(std::memory_order_seq_cst);
    g_using.store(mp, std::memory_order_seq_cst);
    if (mp == nullptr) {  // paused while the main lcore changes pools: completions still come back
      reclaim(o);
      continue;
    }
    const uint16_t q = static_cast<uint16_t>(o.first_queue + i % o.queues);
    if (rte_pktmbuf_alloc_bulk(mp, bufs, kBurst) != 0) {
      reclaim(o);  // all in flight: let completions return some
      continue;
    }
    for (rte_mbuf* m : bufs) fill_frame(m, src);
    const uint64_t t0 = rte_get_tsc_cycles();
    const uint16_t sent = rte_eth_tx_burst(kPort, q, bufs, kBurst);
    const uint64_t took = rte_get_tsc_cycles() - t0;
    if (took > g_max_burst_cycles) g_max_burst_cycles = took;
    if (sent < kBurst) rte_pktmbuf_free_bulk(&bufs[sent], kBurst - sent);
    g_sent.fetch_add(sent, std::memory_order_relaxed);
    if (mp == g_pool.load(std::memory_order_relaxed))
      g_sent_from_last.fetch_add(sent, std::memory_order_relaxed);
  }
  reclaim(o);
  return 0;
}

uint64_t xstat_sum(const char* prefix, const Options* own) {
  const int n = rte_eth_xstats_get_names(kPort, nullptr, 0);
  if (n <= 0) return 0;
  std::vector<rte_eth_xstat_name> names(n);
  std::vector<rte_eth_xstat> values(n);
  rte_eth_xstats_get_names(kPort, names.data(), n);
  rte_eth_xstats_get(kPort, values.data(), n);
  uint64_t sum = 0;
  for (int i = 0; i < n; i++) {
    const char* name = names[values[i].id].name;
    if (own != nullptr) {
      unsigned q;
      char rest[64];
      if (sscanf(name, "tx_q%u_%63s", &q, rest) != 2 || strcmp(rest, prefix) != 0) continue;
      if (q < own->first_queue || q >= own->first_queue + own->queues) continue;
    } else if (strncmp(name, prefix, strlen(prefix)) != 0) {
      continue;
    }
    sum += values[i].value;
  }
  return sum;
}

void on_signal(int sig) { g_signal = sig; }

// Waits until every mbuf of `mp` is back (the TX rings hold sent ones until the worker reclaims
// them); frees it. False if they did not come back within 20 s.
bool drain_and_free(rte_mempool* mp) {
  const uint64_t deadline = rte_get_tsc_cycles() + 20 * rte_get_tsc_hz();
  while (!rte_mempool_full(mp)) {
    if (rte_get_tsc_cycles() > deadline) {
      printf("mr_stress: pool %s: %u of %u mbufs never came back\n", mp->name,
             mp->size - rte_mempool_avail_count(mp), mp->size);
      return false;
    }
    rte_delay_us_sleep(1000);
  }
  rte_spinlock_lock(g_turns);
  rte_mempool_free(mp);
  rte_spinlock_unlock(g_turns);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int eal = rte_eal_init(argc, argv);
  if (eal < 0) die("EAL");
  Options o;
  if (parse(argc - eal, argv + eal, o) != 0) {
    fprintf(stderr,
            "mr_stress: usage: <EAL> -- --first-queue Q --queues N --pools P "
            "[--interval-ms I] [--emu-ctl PATH] (queues within 0..7)\n");
    return 2;
  }
  const bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
  if (!rte_eth_dev_is_valid_port(kPort)) die("no port 0");
  if (primary) configure_port();
  const long mrs_at_start = primary ? emu_mrs(o.emu_ctl) : -1;
  const rte_memzone* mz =
      primary ? rte_memzone_reserve("mrs_turns", sizeof(rte_spinlock_t), SOCKET_ID_ANY, 0)
              : rte_memzone_lookup("mrs_turns");
  if (mz == nullptr) die("memzone mrs_turns");
  g_turns = static_cast<rte_spinlock_t*>(mz->addr);
  if (primary) rte_spinlock_init(g_turns);
  const unsigned lcore = rte_get_next_lcore(-1, 1, 0);
  if (lcore >= RTE_MAX_LCORE) die("need a worker lcore");
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  printf("mr_stress: ready (%s, queues %u-%u)\n", primary ? "primary" : "secondary", o.first_queue,
         o.first_queue + o.queues - 1);
  fflush(stdout);
  rte_eal_remote_launch(worker, &o, lcore);

  unsigned late = 0;       // pools whose memory the emulator did not have registered at creation
  unsigned undrained = 0;  // replaced pools whose mbufs did not all come back
  long last_pool_mrs = 0;
  char name[RTE_MEMPOOL_NAMESIZE];
  for (unsigned i = 0; i < o.pools; i++) {
    rte_delay_us_sleep(o.interval_ms * 1000);
    // Pause the worker and free the pool before creating the next one, so that the new pool
    // likely takes the freed memory: ranges cached for the old one must not serve it.
    if (rte_mempool* old = g_pool.exchange(nullptr, std::memory_order_seq_cst); old != nullptr) {
      // Once the worker's iteration has no pool, it never touches the old one again.
      const uint64_t deadline = rte_get_tsc_cycles() + 20 * rte_get_tsc_hz();
      while (g_using.load() != nullptr && rte_get_tsc_cycles() < deadline) rte_delay_us_sleep(100);
      if (g_using.load() != nullptr || !drain_and_free(old)) undrained++;
    }
    rte_spinlock_lock(g_turns);
    const long before = emu_mrs(o.emu_ctl);
    snprintf(name, sizeof(name), "mrs_%d_%u", getpid(), i);
    rte_mempool* mp = rte_pktmbuf_pool_create(name, kPoolSize, 32, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                              static_cast<int>(rte_socket_id()));
    if (mp == nullptr) die("pool");
    const long after = emu_mrs(o.emu_ctl);
    rte_spinlock_unlock(g_turns);
    last_pool_mrs = after - before;
    if (o.emu_ctl != nullptr && !(after > before)) late++;
    printf("mr_stress: pool %s created, emulator MRs %ld -> %ld\n", name, before, after);
    fflush(stdout);
    g_sent_from_last.store(0);
    g_pool.store(mp, std::memory_order_seq_cst);
  }
  // Bounded: the last pool must really have been used.
  const uint64_t deadline = rte_get_tsc_cycles() + 20 * rte_get_tsc_hz();
  while (g_sent_from_last.load() < 1000 && rte_get_tsc_cycles() < deadline)
    rte_delay_us_sleep(1000);
  g_stop = true;
  rte_eal_mp_wait_lcore();

  printf("mr_stress: done sent=%" PRIu64 " from_last_pool=%" PRIu64 " max_burst_us=%" PRIu64
         " tx_errors=%" PRIu64 " tx_cqe_errors=%" PRIu64 " mr_miss=%" PRIu64
         " late_pools=%u undrained_pools=%u last_pool_mrs=%ld\n",
         g_sent.load(), g_sent_from_last.load(), g_max_burst_cycles * 1000000 / rte_get_tsc_hz(),
         xstat_sum("errors", &o), xstat_sum("tx_cqe_", nullptr),
         xstat_sum("mr_lookup_failures", &o), late, undrained, last_pool_mrs);
  fflush(stdout);
  if (primary) {
    while (g_signal == 0) rte_delay_us_sleep(10000);
    printf("mr_stress: emulator MRs at start %ld, at end %ld\n", mrs_at_start, emu_mrs(o.emu_ctl));
    fflush(stdout);
    rte_eth_dev_stop(kPort);
    rte_eth_dev_close(kPort);
  }
  rte_eal_cleanup();
  return 0;
}
