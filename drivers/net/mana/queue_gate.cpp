// SPDX-License-Identifier: BSD-3-Clause
#include "queue_gate.h"

#include <sched.h>

#include <chrono>

#include <rte_pause.h>

namespace mana {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until `busy` reads 0 once, or `deadline`. A burst takes microseconds, but its lcore may be
// preempted on a loaded machine: spin a little, then yield the CPU to it. The read is the control
// path's half of Dekker's pattern (queue_gate.h gate_enter): sequentially consistent.
bool wait_not_busy(const uint32_t& busy_field, Clock::time_point deadline) {
  std::atomic_ref<uint32_t> busy(const_cast<uint32_t&>(busy_field));
  for (unsigned spins = 0; busy.load(std::memory_order_seq_cst) != 0; spins++) {
    if (spins < 1024) {
      rte_pause();
      continue;
    }
    if (Clock::now() >= deadline) return false;
    sched_yield();
  }
  return true;
}

}  // namespace

bool gate_close(QueueGate& g, unsigned timeout_ms) {
  std::atomic_ref<uint32_t>(g.open).exchange(0, std::memory_order_seq_cst);
  return wait_not_busy(g.busy, Clock::now() + std::chrono::milliseconds(timeout_ms));
}

// One burst per queue at a time (DPDK's rule): once `busy` reads 0 after the flag closed, a burst
// of this process that was inside has left, and every later one sees the flag.
bool gates_close_for_process(uint32_t& process_open, QueueGate* const* gates, unsigned n,
                             unsigned timeout_ms) {
  std::atomic_ref<uint32_t>(process_open).exchange(0, std::memory_order_seq_cst);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  bool ok = true;
  for (unsigned i = 0; i < n; i++)
    if (gates[i] != nullptr && !wait_not_busy(gates[i]->busy, deadline)) ok = false;
  return ok;
}

}  // namespace mana
