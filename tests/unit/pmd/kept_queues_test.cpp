// SPDX-License-Identifier: BSD-3-Clause
// Queue structs that outlive their release (kept_queues.h): a burst of another process that loaded
// a queue pointer before the primary released or set up that queue again still finds a closed gate
// in live memory, and a released queue id (NULL) costs a burst nothing. Under ASan (unit suite of
// the sanitizer build) a use of freed queue memory fails these tests.
#include "kept_queues.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <rte_errno.h>

#include "burst.h"
#include "eal_env.h"

namespace mana {
namespace {

// A port's private data in DPDK memory, as the primary has it; freed with its kept queues.
struct Port {
  PortPriv* priv = static_cast<PortPriv*>(rte_zmalloc("priv", sizeof(PortPriv), 0));
  ~Port() {
    if (priv == nullptr) return;
    free_kept_queues(*priv);
    rte_free(priv);
  }
};

TEST(KeptQueues, BurstsOnAReleasedQueueIdReturnZero) {
  rte_mbuf* pkts[4] = {};
  for (uint64_t offloads : {uint64_t{0}, uint64_t{RTE_ETH_RX_OFFLOAD_CHECKSUM}})
    EXPECT_EQ(select_rx_burst(offloads)(nullptr, pkts, 4), 0);
  for (bool long_oob : {false, true})
    EXPECT_EQ(select_tx_burst(RTE_ETH_TX_OFFLOAD_MULTI_SEGS, long_oob)(nullptr, pkts, 4), 0);
  rte_errno = 0;
  EXPECT_EQ(tx_prepare(nullptr, pkts, 4), 0);  // no queue: EINVAL, as DPDK's debug check says
  EXPECT_EQ(rte_errno, EINVAL);
}

TEST(KeptQueues, SetupAgainReusesTheStructAndKeepsOnlyTheGate) {
  Port port;
  PortPriv* priv = port.priv;
  ASSERT_NE(priv, nullptr);
  RxQueue* first = kept_queue_struct(priv->kept_rxq[3], "rxq", SOCKET_ID_ANY);
  ASSERT_NE(first, nullptr);
  first->nb_desc = 256;
  first->stats.packets = 7;
  first->gate.busy = 1;  // a stale burst of another process at the gate this moment
  RxQueue* again = kept_queue_struct(priv->kept_rxq[3], "rxq", SOCKET_ID_ANY);
  EXPECT_EQ(again, first);
  EXPECT_EQ(again->gate.busy, 1u);
  EXPECT_EQ(again->nb_desc, 0u);
  EXPECT_EQ(again->stats.packets, 0u);
  EXPECT_NE(kept_queue_struct(priv->kept_txq[0], "txq", SOCKET_ID_ANY), nullptr);
  free_kept_queues(*priv);  // ASan's leak check: nothing kept survives close
  EXPECT_EQ(priv->kept_rxq[3], nullptr);
  EXPECT_EQ(priv->kept_txq[0], nullptr);
}

// A burst thread keeps using the pointer it loaded once, as a secondary's lcore may, while the
// control path closes the gate, sets the queue up again and reopens it, many times: the burst only
// ever touches live memory and is never inside while the struct is being set up. Every
// kWaitEvery-th reopening waits until a burst has entered, so the race runs through the whole loop
// (a gate that never lets a burst in, or a burst thread that never got to run, fails here).
TEST(KeptQueues, StaleBurstRacesReleaseAndSetup) {
  constexpr int kSetups = 20000;
  constexpr int kWaitEvery = 250;  // 80 waits: each may cost a time slice on a loaded machine
  constexpr auto kEntryDeadline = std::chrono::seconds(10);  // well below meson's 30 s
  Port port;
  PortPriv* priv = port.priv;
  ASSERT_NE(priv, nullptr);
  TxQueue* stale = kept_queue_struct(priv->kept_txq[1], "txq", SOCKET_ID_ANY);
  ASSERT_NE(stale, nullptr);
  stale->nb_desc = 1;
  gate_open(stale->gate);
  const uint32_t process_open = 1;
  std::atomic<bool> stop{false};
  std::atomic<unsigned> torn{0};
  std::atomic<uint64_t> entered{0};
  std::thread burst([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (!gate_enter(stale->gate, process_open)) continue;
      if (std::atomic_ref<uint32_t>(stale->nb_desc).load(std::memory_order_relaxed) == 0) torn++;
      entered.fetch_add(1, std::memory_order_relaxed);
      gate_leave(stale->gate);
    }
  });
  int waited = 0;
  bool burst_got_in = true;
  for (int i = 0; i < kSetups && burst_got_in; i++) {
    ASSERT_TRUE(gate_close(stale->gate, kGateTimeoutMs));
    TxQueue* q = kept_queue_struct(priv->kept_txq[1], "txq", SOCKET_ID_ANY);
    ASSERT_EQ(q, stale);
    std::atomic_ref<uint32_t>(q->nb_desc).store(1, std::memory_order_relaxed);
    const uint64_t before = entered.load(std::memory_order_relaxed);
    gate_open(q->gate);
    if (i % kWaitEvery != 0) continue;
    waited++;
    const auto deadline = std::chrono::steady_clock::now() + kEntryDeadline;
    while (entered.load(std::memory_order_relaxed) == before) {
      if (std::chrono::steady_clock::now() > deadline) {
        burst_got_in = false;
        break;
      }
      std::this_thread::yield();
    }
  }
  stop = true;
  burst.join();
  EXPECT_TRUE(burst_got_in) << "no burst entered the reopened gate within 10 s (after "
                            << entered.load() << " bursts inside)";
  EXPECT_EQ(waited, (kSetups + kWaitEvery - 1) / kWaitEvery);
  EXPECT_GE(entered.load(), static_cast<uint64_t>(waited));
  EXPECT_EQ(torn.load(), 0u) << "a burst was inside while the queue was set up again";
}

}  // namespace
}  // namespace mana

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
