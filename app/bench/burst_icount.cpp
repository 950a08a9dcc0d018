// SPDX-License-Identifier: BSD-3-Clause
// Steady-state io forwarding through net_mana's RX and TX burst functions against a fake NIC, in
// one thread, for instruction counts per packet (doc/performance.md): scripts/bench-icount.sh runs
// it under `valgrind --tool=callgrind`, collecting only inside the burst functions, whose costs are
// then exact and repeatable. Without valgrind it prints its own timing, which is only indicative.
//
// Each round: the NIC completes `burst` RX WQEs (one CQE each, 64-byte frames), rx_burst takes
// them and refills, tx_burst posts the same mbufs (CQE suppression on all but the last), and the
// NIC completes the TX batch with one CQE; the next tx_burst frees those mbufs in bulk.
//
//   burst_icount [rounds] [burst] [tx_rs_thresh] [tx_free_thresh] [fast-free]
//   (defaults 20000, 32, and the driver's defaults: 1, 0, no MBUF_FAST_FREE)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <rte_eal.h>

#include "burst.h"
#include "fake_nic.h"
#include "rx_queue.h"
#include "priv.h"

namespace {

using namespace mana;

constexpr uint32_t kRing = 256;
constexpr uint32_t kRqId = 0x1234, kRxCqId = 0x11, kSqId = 0x2345, kTxCqId = 0x22;
constexpr uint16_t kFrameLen = 64;

struct Bench {
  mana_test::FakePortState port;
  mana_test::AlignedMemory rq_mem{kRing * hw::kBasicUnit};
  mana_test::AlignedMemory sq_mem{kRing * hw::kBasicUnit};
  mana_test::FakeCq rx_cq{kRing};
  mana_test::FakeCq tx_cq{kRing};
  rte_mbuf* slots[kRing] = {};
  TxDesc descs[kRing] = {};
  rte_mbuf* tx_slots[kRing] = {};
  RxQueue rxq{};
  TxQueue txq{};

  uint16_t rs_thresh = 1, free_thresh = 0;
  uint8_t fast_free = 0;

  bool init() {
    if (!port.init("bench_pool", 4095)) return false;
    gate_open(rxq.gate);
    gate_open(txq.gate);
    rxq.rq = WorkQueue{rq_mem.p, static_cast<uint32_t>(rq_mem.size - 1), kRing, 0, 0, kRqId};
    rxq.cq = rx_cq.consumer(kRxCqId);
    rxq.mbufs = slots;
    rxq.desc_mask = kRing - 1;
    rxq.buf_len = RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM;
    rxq.port_id = mana_test::kFakePortId;
    rxq.mp = port.pool;
    rxq.priv = &port.priv;
    rxq.free_thresh = rx_free_thresh_for(0, kRing);
    mr_queue_cache_reset(rxq.mr);
    if (rx_ring_fill(rxq, port.pp.registrar) != 0) return false;
    txq.sq = WorkQueue{sq_mem.p,
                       static_cast<uint32_t>(sq_mem.size - 1),
                       static_cast<uint32_t>(sq_mem.size / hw::kBasicUnit),
                       0,
                       0,
                       kSqId};
    txq.cq = tx_cq.consumer(kTxCqId);
    txq.descs = descs;
    txq.mbufs = tx_slots;
    txq.desc_mask = kRing - 1;
    set_tx_oob(txq, kTxCqId, kSqId, 0);
    txq.max_sge = 15;
    txq.rs_thresh = rs_thresh;
    txq.reclaim_below = free_thresh != 0 ? free_thresh : kRing + 1;
    txq.fast_free = fast_free;
    txq.port_id = mana_test::kFakePortId;
    txq.priv = &port.priv;
    mr_queue_cache_reset(txq.mr);
    return true;
  }

  void nic_rx(unsigned n) {
    for (unsigned i = 0; i < n; i++)
      rx_cq.produce([](hw::Cqe& e) {
        e.dw[0] = hw::kCqeRxOkay;
        e.dw[1] = hw::Cqe::RxHashType::set(
            hw::Cqe::RxUdpCsumOk::set(hw::Cqe::RxIpCsumOk::set(0, 1), 1), hw::kHashUdpIpv4);
        e.rx_packet(0).dw0 = kFrameLen;
        e.rx_packet(0).packet_hash = 0x12345678;
        e.dw[15] = hw::Cqe::WqNum::set(0, kRqId);
      });
  }
  // Every WQE that did not suppress its CQE gets one naming it (one basic unit each) in
  // tx_wqe_offset, as the NIC does.
  void nic_tx_done() {
    for (; tx_done_bu != txq.sq.head_bu; tx_done_bu++) {
      hw::TxShortOob oob;
      std::memcpy(&oob,
                  sq_mem.p + ((tx_done_bu * hw::kBasicUnit + hw::kDmaOobSize) & txq.sq.size_mask),
                  sizeof(oob));
      if (hw::TxShortOob::SuppressCqe::get(oob.dw0)) continue;
      tx_cq.produce([&](hw::Cqe& e) {
        e.dw[0] = hw::Cqe::ClientType::set(hw::kCqeTxOkay, hw::kClientTypeCompletion);
        e.dw[hw::Cqe::kTxWqeOffsetDword] = hw::Cqe::TxWqeOffset::set(0, tx_done_bu);
        e.dw[15] = hw::Cqe::IsSq::set(hw::Cqe::WqNum::set(0, kSqId), 1);
      });
    }
  }
  uint32_t tx_done_bu = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const unsigned rounds = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 20000;
  const unsigned burst = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 32;
  if (burst == 0 || burst > 64) {
    std::fprintf(stderr, "burst_icount: burst must be 1..64\n");
    return 2;
  }
  const char* eal[] = {"burst_icount", "--no-huge", "-m", "128",         "--no-pci",
                       "--no-shconf",  "-l",        "0",  "--log-level", "*:warning"};
  if (rte_eal_init(static_cast<int>(sizeof(eal) / sizeof(eal[0])), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "burst_icount: cannot initialise DPDK's EAL\n");
    return 1;
  }
  static Bench b;
  if (argc > 3) b.rs_thresh = static_cast<uint16_t>(std::atoi(argv[3]));
  if (argc > 4) b.free_thresh = static_cast<uint16_t>(std::atoi(argv[4]));
  b.fast_free = argc > 5 && std::string_view(argv[5]) == "fast-free";
  if (b.rs_thresh == 0 || b.rs_thresh >= kRing || b.free_thresh > kRing) {
    std::fprintf(stderr, "burst_icount: tx_rs_thresh must be 1..%u, tx_free_thresh 0..%u\n",
                 kRing - 1, kRing);
    return 2;
  }
  if (!b.init()) {
    std::fprintf(stderr, "burst_icount: out of DPDK memory\n");
    return 1;
  }
  const eth_rx_burst_t rx =
      select_rx_burst(RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH);
  const eth_tx_burst_t tx = select_tx_burst(0);
  rte_mbuf* pkts[64];
  uint64_t packets = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned r = 0; r < rounds; r++) {
    b.nic_rx(burst);
    const uint16_t n = rx(&b.rxq, pkts, static_cast<uint16_t>(burst));
    const uint16_t sent = tx(&b.txq, pkts, n);
    if (n != burst || sent != n) {
      std::fprintf(stderr, "burst_icount: round %u: received %u, sent %u of %u\n", r, n, sent,
                   burst);
      return 1;
    }
    b.nic_tx_done();
    packets += sent;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "burst_icount: %llu packets forwarded in %u rounds of %u (%.1f ns/packet, indicative)\n",
      static_cast<unsigned long long>(packets), rounds, burst, secs * 1e9 / packets);
  return 0;
}
