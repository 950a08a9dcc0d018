// SPDX-License-Identifier: BSD-3-Clause
// A CQE that lands while the RX burst polls (doc/hardware.md §4.5): the burst must judge each CQ
// entry on one read of its owner word. A hook on the CQ's memory makes the NIC write the CQE right
// after the burst's first read of the entry's owner word, so any second read sees the new owner:
// that must not count an overflow on a healthy queue, and the CQE is taken by the next burst.
// The hook: the CQ page is made inaccessible; each access faults, the handler opens the page and
// single-steps the access (x86 trap flag), and the trap handler writes the CQE after the first
// read of the watched word, or closes the page again.
#include <signal.h>
#include <sys/mman.h>
#include <sys/ucontext.h>

#include <cstring>

#include "burst.h"
#include "eal_env.h"
#include "fake_port.h"
#include "fake_rx_queue.h"

namespace {

using namespace mana;

constexpr uint32_t kRing = 64;  // 64 CQEs of 64 B: the CQ is exactly one page
constexpr uint32_t kRqId = 0x1234;

// The hook's state, reached from the signal handlers.
struct Hook {
  uint8_t* page = nullptr;
  const uint32_t* watched = nullptr;  // the owner word the burst reads
  mana_test::FakeCq* cq = nullptr;
  hw::Cqe cqe{};
  unsigned reads = 0;     // accesses to the watched word
  bool produced = false;  // the CQE was written
  bool produce_now = false;
} g_hook;

constexpr greg_t kTrapFlag = 0x100;

void on_fault(int, siginfo_t* si, void* ctx) {
  auto* addr = static_cast<uint8_t*>(si->si_addr);
  if (addr < g_hook.page || addr >= g_hook.page + 4096) {
    signal(SIGSEGV, SIG_DFL);  // not ours: fault again, for real
    return;
  }
  mprotect(g_hook.page, 4096, PROT_READ | PROT_WRITE);
  if (addr == reinterpret_cast<const uint8_t*>(g_hook.watched) && ++g_hook.reads == 1)
    g_hook.produce_now = true;
  static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_EFL] |= kTrapFlag;
}

void on_trap(int, siginfo_t*, void* ctx) {
  static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_EFL] &= ~kTrapFlag;
  if (g_hook.produce_now) {
    g_hook.produce_now = false;
    g_hook.cq->produce(g_hook.cqe);  // the NIC writes the CQE; the page stays open from now on
    g_hook.produced = true;
    return;
  }
  if (!g_hook.produced) mprotect(g_hook.page, 4096, PROT_NONE);
}

class RxOwnerRace : public mana_test::FakePort {
 protected:
  void SetUp() override {
    FakePort::SetUp();
    rxq_.start(state_);
  }
  void TearDown() override {
    rxq_.stop();
    FakePort::TearDown();
  }
  mana_test::FakeRxQueue rxq_{kRing, kRqId, 7};
  RxQueue& q_ = rxq_.q;
};

TEST_F(RxOwnerRace, CqeLandingBetweenReadsIsNoOverflow) {
  static_assert(kRing * sizeof(hw::Cqe) == 4096);
  g_hook.page = reinterpret_cast<uint8_t*>(rxq_.cq.ring());
  g_hook.watched = &rxq_.cq.ring()[0].dw[hw::Cqe::kOwnerDword];
  g_hook.cq = &rxq_.cq;
  g_hook.cqe.dw[0] = hw::kCqeRxOkay;
  g_hook.cqe.rx_packet(0).dw0 = 64;
  g_hook.cqe.dw[hw::Cqe::kOwnerDword] = hw::Cqe::WqNum::set(0, kRqId);
  struct sigaction fault {
  }, trap{}, old_fault{}, old_trap{};
  fault.sa_sigaction = on_fault;
  fault.sa_flags = SA_SIGINFO;
  trap.sa_sigaction = on_trap;
  trap.sa_flags = SA_SIGINFO;
  ASSERT_EQ(sigaction(SIGSEGV, &fault, &old_fault), 0);
  ASSERT_EQ(sigaction(SIGTRAP, &trap, &old_trap), 0);
  const eth_rx_burst_t burst = select_rx_burst(0);
  rte_mbuf* pkts[2];
  ASSERT_EQ(mprotect(g_hook.page, 4096, PROT_NONE), 0);
  // A budget of 2: the burst looks at the head entry alone, not four at a time.
  const uint16_t first = burst(&q_, pkts, 2);
  mprotect(g_hook.page, 4096, PROT_READ | PROT_WRITE);
  sigaction(SIGSEGV, &old_fault, nullptr);
  sigaction(SIGTRAP, &old_trap, nullptr);
  ASSERT_TRUE(g_hook.produced) << "the burst never read the head entry's owner word";
  EXPECT_EQ(q_.stats.cq_overflows, 0u)
      << "a CQE that landed after the first read of its owner word was counted as an overflow";
  // Whether the burst took it depends on which read saw it; either way it is delivered once.
  const uint16_t second = burst(&q_, pkts + first, static_cast<uint16_t>(2 - first));
  ASSERT_EQ(first + second, 1);
  EXPECT_EQ(pkts[0]->pkt_len, 64u);
  rte_pktmbuf_free(pkts[0]);
  EXPECT_EQ(q_.stats.cq_overflows, 0u);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new mana_test::EalEnvironment);
  return RUN_ALL_TESTS();
}
