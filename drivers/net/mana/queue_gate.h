// SPDX-License-Identifier: BSD-3-Clause
// A gate per queue between the burst functions of every process and the control path of the
// primary. The gate lives in the queue, in DPDK memory, so a secondary's bursts pass the same gate
// as the primary's. A burst enters (marks the queue busy, then checks that the gate is open) and
// leaves; the control path closes the gate and waits until no burst is inside before it releases
// anything a burst touches (rings, CQ, doorbell page, mbufs). Swapping the burst functions alone
// cannot do that: an lcore that already loaded the old function keeps running it.
#pragma once

#include <atomic>
#include <cstdint>

namespace mana {

// Plain fields (the queue structs stay trivially copyable for the unit tests); every access goes
// through std::atomic_ref. One burst at a time per queue (DPDK's rule), so `busy` is a flag.
struct QueueGate {
  uint32_t open;  // 1: bursts may run; 0 at queue setup
  uint32_t busy;  // 1 while a burst of some process is inside
};

// Entry costs one locked exchange per burst (not per packet). Dekker's pattern: the burst writes
// `busy` then reads `open`; the control path writes `open` then reads `busy`. Both writes
// (exchanges) and both reads are sequentially consistent, so all four are in one total order that
// respects each thread's program order: whichever read comes later in it sees the other side's
// write. Either the burst sees the gate closed, or the control path sees it busy. With acquire
// reads instead, the C++ memory model allows both reads to see the old values (store buffering):
// x86 and ARM64's ldar happen to forbid it, ldapr (ARMv8.3 RCpc) does not. The seq_cst loads cost
// nothing on x86 (a plain load) and are ldar on ARM64. tests/unit/pmd/queue_gate_orders_test.cpp
// checks the orders used.
// `process_open` is the calling process's own flag (a secondary that detaches closes only its own
// bursts, not the primary's).
inline bool gate_enter(QueueGate& g, const uint32_t& process_open) {
  std::atomic_ref<uint32_t>(g.busy).exchange(1, std::memory_order_seq_cst);
  if (std::atomic_ref<uint32_t>(g.open).load(std::memory_order_seq_cst) != 0 &&
      std::atomic_ref<uint32_t>(const_cast<uint32_t&>(process_open))
              .load(std::memory_order_seq_cst) != 0)
    return true;
  std::atomic_ref<uint32_t>(g.busy).store(0, std::memory_order_release);
  return false;
}

inline void gate_leave(QueueGate& g) {
  std::atomic_ref<uint32_t>(g.busy).store(0, std::memory_order_release);
}

inline void gate_open(QueueGate& g) {
  std::atomic_ref<uint32_t>(g.open).store(1, std::memory_order_release);
}

inline bool gate_is_open(const QueueGate& g) {
  return std::atomic_ref<uint32_t>(const_cast<uint32_t&>(g.open)).load(std::memory_order_seq_cst) !=
         0;
}

// Closes the gate and waits until no burst is inside, at most `timeout_ms`. False when a burst
// stayed inside that long (a process that died inside a burst, or an lcore stopped by a debugger):
// the caller logs it and goes on.
bool gate_close(QueueGate& g, unsigned timeout_ms);

// Closes a process's own entry (`process_open`, shared by all its queues of a port) and waits until
// none of `gates` has a burst inside: bursts of this process that entered earlier have left. At
// most `timeout_ms` in all; false on timeout.
bool gates_close_for_process(uint32_t& process_open, QueueGate* const* gates, unsigned n,
                             unsigned timeout_ms);

// How long stop and detach wait for a burst to leave.
inline constexpr unsigned kGateTimeoutMs = 2000;

}  // namespace mana
