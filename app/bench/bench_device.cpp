// SPDX-License-Identifier: BSD-3-Clause
// Device-model benchmark (not a test): two ports on a `pair` wire, one queue each, driven like a
// poll-mode driver on one core: post TX WQEs, ring doorbells, poll the device, consume TX and RX
// CQEs, repost RX WQEs. Prints forwarded Mpps (frames that reached an RX CQE).
//
//   bench_device [seconds=3] [burst=32] [--suppress] [--trap] [--hw KEY=VALUE]...
//   --suppress: TX CQE suppression on all but the last WQE of a burst (as DPDK >= 23.07)
//   --trap:     doorbells through Device::ring (trap mode) instead of the polled page
//   --threads:  the device polls on its own thread pinned to CPU 0 while the driver side runs on
//               CPU 1, as the device thread beside a forwarding lcore (the cache lines of WQEs,
//               CQEs and frames then move between cores); Mpps per wall-clock second
//   --hw:       an open hardware behaviour, as `mana-emu run --hw` (e.g. single-queue-hash=on to
//               hash every frame although each port has one queue)
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <atomic>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "config/hw_options.h"
#include "device/device.h"
#include "mana/gdma_format.h"

namespace {

using namespace mana;
using namespace mana::emu;

constexpr uint32_t kDepth = 256;    // descriptors per queue (a 6.2-era device's maximum)
constexpr uint32_t kFrameLen = 60;  // 64 bytes on the wire with the FCS
constexpr uint32_t kRxBuf = 2048;

struct Memory {
  explicit Memory(size_t n) : p(static_cast<uint8_t*>(std::aligned_alloc(4096, n))) {
    std::memset(p, 0, n);
  }
  ~Memory() { std::free(p); }
  uint8_t* p;
};

struct CqConsumer {
  hw::Cqe* ring;
  uint32_t head = kDepth;
  // The next valid CQE or null (kDepth is a power of two).
  const hw::Cqe* next() {
    const hw::Cqe& c = ring[head & (kDepth - 1)];
    if (hw::cqe_state(c.owner(), head, 8) != hw::CqeState::kValid) return nullptr;
    ++head;
    return &c;
  }
};

struct PortQueues {
  uint32_t ctx = 0;
  volatile uint64_t* page = nullptr;
  SqBinding sq{};
  uint8_t* sq_ring = nullptr;
  uint32_t sq_head = 0, sq_tail = 0;  // BUs
  CqConsumer tx_cq{};
  uint32_t rq_id = 0;
  uint8_t* rq_ring = nullptr;
  uint32_t rq_head = 0;
  CqConsumer rx_cq{};
  uint8_t* rx_bufs = nullptr;
  uint32_t lkey = 0;
  uint8_t* frame = nullptr;
  uint64_t rx_packets = 0, tx_errors = 0, rx_errors = 0;
};

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
    std::fprintf(stderr, "bench_device: cannot pin to CPU %d\n", cpu);
}

bool check(int err, const char* what) {
  if (err != 0) std::fprintf(stderr, "bench_device: %s failed: %s\n", what, std::strerror(err));
  return err == 0;
}

void write_rx_wqe(PortQueues& q) {
  uint8_t* w = q.rq_ring + (q.rq_head & (kDepth - 1)) * hw::kBasicUnit;
  const hw::WqeHeader h = hw::WqeHeader::make(1, hw::kShortOobSize);
  std::memcpy(w, &h, sizeof(h));
  const hw::Sge sge{reinterpret_cast<uint64_t>(q.rx_bufs + (q.rq_head & (kDepth - 1)) * kRxBuf),
                    q.lkey, kRxBuf};
  std::memcpy(w + 16, &sge, sizeof(sge));
  ++q.rq_head;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  unsigned burst = 32;
  bool suppress = false, trap = false, threads = false;
  VfConfig config;
  for (int i = 1, pos = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--hw" && i + 1 < argc) {
      std::string error;
      if (!set_hw_option(argv[++i], &config.hw, &error)) {
        std::fprintf(stderr, "bench_device: %s\n", error.c_str());
        return 2;
      }
    } else if (a == "--suppress")
      suppress = true;
    else if (a == "--trap")
      trap = true;
    else if (a == "--threads")
      threads = true;
    else if (pos++ == 0)
      seconds = std::atof(argv[i]);
    else
      burst = static_cast<unsigned>(std::atoi(argv[i]));
  }
  if (burst == 0 || burst > kDepth / 2) burst = 32;

  for (uint8_t p = 0; p < 2; ++p) {
    PortConfig pc;
    pc.mac = {0x00, 0x15, 0x5d, 0, 0, static_cast<uint8_t>(p + 1)};
    pc.wire = "pair";
    config.ports.push_back(pc);
  }
  auto dev = Device::create(config);
  if (!dev) return 1;
  dev->set_poll_doorbells(!trap);

  // 40 bytes of RSS key: one queue per port, so the key only feeds the reported hash.
  uint8_t key[hw::kRssKeySize];
  for (uint32_t i = 0; i < sizeof(key); ++i) key[i] = static_cast<uint8_t>(i * 29 + 1);

  Memory pages(2 * 4096), rings(2 * 2 * 8192), cqs(4 * kDepth * 64),
      bufs(2 * (kDepth + 1) * kRxBuf);
  PortQueues ports[2];
  for (uint32_t p = 0; p < 2; ++p) {
    PortQueues& q = ports[p];
    q.page = reinterpret_cast<volatile uint64_t*>(pages.p + p * 4096);
    uint32_t pd = 0, tx_cq = 0, rx_cq = 0, wq = 0, qp = 0, rss = 0;
    q.sq_ring = rings.p + p * 2 * 8192;
    q.rq_ring = q.sq_ring + 8192;
    q.tx_cq.ring = reinterpret_cast<hw::Cqe*>(cqs.p + (2 * p) * kDepth * 64);
    q.rx_cq.ring = reinterpret_cast<hw::Cqe*>(cqs.p + (2 * p + 1) * kDepth * 64);
    q.rx_bufs = bufs.p + p * (kDepth + 1) * kRxBuf;
    q.frame = q.rx_bufs + kDepth * kRxBuf;
    RqBinding rb{};
    const bool ok =
        check(dev->open_context(q.page, &q.ctx), "open_context") &&
        check(dev->alloc_pd(q.ctx, &pd), "alloc_pd") &&
        check(dev->reg_mr(pd, reinterpret_cast<uint64_t>(q.rx_bufs), (kDepth + 1) * kRxBuf, 1,
                          &q.lkey),
              "reg_mr") &&
        check(dev->create_cq(q.ctx, q.tx_cq.ring, kDepth, -1, &tx_cq), "create_cq") &&
        check(dev->create_cq(q.ctx, q.rx_cq.ring, kDepth, -1, &rx_cq), "create_cq") &&
        check(dev->create_raw_qp(q.ctx, pd, p + 1, q.sq_ring, 8192, kDepth, 1, tx_cq, &q.sq, &qp),
              "create_raw_qp") &&
        check(dev->create_wq(q.ctx, pd, q.rq_ring, 8192, kDepth, 1, rx_cq, &wq), "create_wq") &&
        check(dev->create_rss_qp(q.ctx, pd, p + 1, &wq, 0, 1, key, sizeof(key), &rb, &rss),
              "create_rss_qp");
    if (!ok) return 1;
    q.rq_id = rb.wq_id;
    // A 60-byte IPv4/UDP frame to the other port.
    const uint8_t frame[kFrameLen] = {0x00, 0x15,
                                      0x5d, 0,
                                      0,    static_cast<uint8_t>(2 - p),
                                      0x00, 0x15,
                                      0x5d, 0,
                                      0,    static_cast<uint8_t>(p + 1),
                                      0x08, 0x00,
                                      0x45, 0,
                                      0,    46,
                                      0,    0,
                                      0,    0,
                                      64,   17,
                                      0,    0,
                                      10,   0,
                                      0,    static_cast<uint8_t>(p + 1),
                                      10,   0,
                                      0,    static_cast<uint8_t>(2 - p),
                                      0x12, 0x34,
                                      0x56, 0x78,
                                      0,    26,
                                      0,    0};
    std::memcpy(q.frame, frame, sizeof(frame));
    for (uint32_t i = 0; i < kDepth; ++i) write_rx_wqe(q);
  }
  auto doorbell = [&](PortQueues& q, uint32_t offset, uint64_t value) {
    if (trap)
      dev->ring(q.ctx, offset, value);
    else
      // The device samples the page; release: the ring writes before the doorbell.
      std::atomic_ref<uint64_t>(const_cast<uint64_t&>(q.page[offset / 8]))
          .store(value, std::memory_order_release);
  };
  for (PortQueues& q : ports)
    doorbell(q, hw::kRqDoorbellOffset, hw::rq_doorbell(q.rq_id, q.rq_head * hw::kBasicUnit));

  hw::TxOob oob{};
  // CPU time of this thread as well as wall time: the machine may be shared, and Mpps per CPU
  // second is what one dedicated core would do.
  auto cpu_now = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  };
  std::atomic<bool> stop{false};
  std::thread device_thread;
  // The device thread's, read after the join: passes, those that did work, their work items and
  // their share of the thread's time.
  uint64_t passes = 0, busy_passes = 0, work = 0;
  double busy_seconds = 0, all_seconds = 0;
  if (threads) {
    pin_to(1);
    device_thread = std::thread([&] {
      pin_to(0);
      const auto begin = std::chrono::steady_clock::now();
      while (!stop.load(std::memory_order_relaxed)) {
        const auto t0 = std::chrono::steady_clock::now();
        const unsigned n = dev->poll();
        ++passes;
        if (n != 0) {
          ++busy_passes;
          work += n;
          busy_seconds +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
      }
      all_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    });
  }
  const double cpu_start = cpu_now();
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  uint64_t loops = 0;
  for (;;) {
    if ((++loops & 255) == 0 && std::chrono::steady_clock::now() >= end) break;
    for (PortQueues& q : ports) {
      // TX completions: a CQE completes its WQE and, with suppression, all earlier ones.
      while (const hw::Cqe* c = q.tx_cq.next()) {
        q.tx_errors += c->type() != hw::kCqeTxOkay;
        q.sq_tail = hw::Cqe::TxWqeOffset::get(c->dw[hw::Cqe::kTxWqeOffsetDword]) + 1;
      }
      const uint32_t room = kDepth - (q.sq_head - q.sq_tail);
      const uint32_t n = room < burst ? room : burst;
      if (n == 0) continue;
      using S = hw::TxShortOob;
      const uint32_t dw0 = S::VcqNumber::set(S::IsIpv4::set(0, 1), q.sq.cq_id);
      oob.s.dw1 =
          S::VportOffset::set(S::VsqFrame::set(0, hw::vsq_frame_of(q.sq.sq_id)), q.sq.tx_vp_offset);
      const hw::WqeHeader h = hw::WqeHeader::make(1, hw::kShortOobSize);
      const hw::Sge sge{reinterpret_cast<uint64_t>(q.frame), q.lkey, kFrameLen};
      for (uint32_t i = 0; i < n; ++i) {
        oob.s.dw0 = S::SuppressCqe::set(dw0, suppress && i + 1 < n);
        uint8_t* w = q.sq_ring + (q.sq_head & (kDepth - 1)) * hw::kBasicUnit;
        std::memcpy(w, &h, sizeof(h));
        std::memcpy(w + 8, &oob.s, sizeof(oob.s));
        std::memcpy(w + 16, &sge, sizeof(sge));
        ++q.sq_head;
      }
      doorbell(q, hw::kSqDoorbellOffset, hw::sq_doorbell(q.sq.sq_id, q.sq_head * hw::kBasicUnit));
    }
    if (!threads) dev->poll();
    for (PortQueues& q : ports) {
      uint32_t got = 0;
      while (const hw::Cqe* c = q.rx_cq.next()) {
        const unsigned packets = c->type() == hw::kCqeRxCoalesced4 ? 4 : 1;
        for (unsigned k = 0; k < packets && (k == 0 || c->rx_packet(k).dw0 != 0); ++k) {
          q.rx_errors += c->type() == hw::kCqeRxTruncated;
          ++q.rx_packets;
          write_rx_wqe(q);
          ++got;
        }
      }
      if (got != 0) {
        doorbell(q, hw::kRqDoorbellOffset, hw::rq_doorbell(q.rq_id, q.rq_head * hw::kBasicUnit));
      }
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = cpu_now() - cpu_start;
  if (threads) {
    stop.store(true);
    device_thread.join();
  }
  const uint64_t rx = ports[0].rx_packets + ports[1].rx_packets;
  const uint64_t tx_errors = ports[0].tx_errors + ports[1].tx_errors;
  const uint64_t rx_errors = ports[0].rx_errors + ports[1].rx_errors;
  const uint64_t wire_drops =
      dev->port_counters(0).tx_wire_drops + dev->port_counters(1).tx_wire_drops;
  std::printf(
      "bench_device: %.2f Mpps per CPU second, %.2f Mpps wall clock (%" PRIu64
      " frames of %u bytes in %.2f s, 2 ports on a pair wire, burst %u, %s doorbells%s%s); errors "
      "tx %" PRIu64 " rx %" PRIu64 "; wire drops %" PRIu64 "\n",
      rx / cpu / 1e6, rx / secs / 1e6, rx, kFrameLen + 4, secs, burst, trap ? "trapped" : "polled",
      suppress ? ", TX CQE suppression" : "", threads ? ", device on its own core" : "", tx_errors,
      rx_errors, wire_drops);
  if (threads)
    std::printf(
        "bench_device: device thread: %" PRIu64 " passes, %" PRIu64
        " with work (%.0f %% of its time), %.1f work items per busy pass, %.1f ns per item\n",
        passes, busy_passes, 100 * busy_seconds / all_seconds,
        busy_passes ? double(work) / busy_passes : 0.0, busy_seconds * 1e9 / work);
  return 0;
}
