// SPDX-License-Identifier: BSD-3-Clause
#include "doorbell/trap.h"

#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <cerrno>

#include "doorbell/faulting_store.h"

namespace mana::emu::doorbell {
namespace {

constexpr uintptr_t kFree = 0;
constexpr uintptr_t kClaimed = 1;  // being filled in by trap_register; never a page address

// One registered page. `page` is published last (release) so the handler, which matches on it
// (acquire), sees the other fields complete.
struct TrapEntry {
  std::atomic<uintptr_t> page;
  std::atomic<uint32_t> context_id;
  std::atomic<DoorbellFifo*> fifo;
};

constinit TrapEntry g_entries[kMaxTrappedPages] = {};
constinit std::atomic<uint32_t> g_entries_used{0};  // entries at or past this index were never used

enum InstallState : int { kNotInstalled, kInstalling, kInstalled };
constinit std::atomic<int> g_install_state{kNotInstalled};
constinit struct sigaction g_previous = {};

const TrapEntry* find_entry(uintptr_t page) {
  const uint32_t used = g_entries_used.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < used; ++i) {
    if (g_entries[i].page.load(std::memory_order_acquire) == page) return &g_entries[i];
  }
  return nullptr;
}

// The current contents of the (readable) trapped page, for an exchange (xchg, SWP).
uint64_t load(uintptr_t address, unsigned width) {
  switch (width) {
    case 1:
      return *reinterpret_cast<const volatile uint8_t*>(address);
    case 2:
      return *reinterpret_cast<const volatile uint16_t*>(address);
    case 4:
      return *reinterpret_cast<const volatile uint32_t*>(address);
    default:
      return *reinterpret_cast<const volatile uint64_t*>(address);
  }
}

// A fault that is not ours: behave as if our handler were not there.
void chain(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous;
  if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
    // Restore the default action; a real fault re-executes and dies, a sent signal is re-raised
    // (blocked until we return). A synchronous fault cannot be ignored, hence SIG_IGN too.
    struct sigaction default_action = {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(sig, &default_action, nullptr);
    if (info->si_code <= 0) raise(sig);
    return;
  }
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, context);
  } else {
    previous.sa_handler(sig);
  }
}

void on_sigsegv(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  const uintptr_t page = address & ~uintptr_t{kTrapPageSize - 1};
  const TrapEntry* entry = info->si_code == SEGV_ACCERR ? find_entry(page) : nullptr;
  if (entry == nullptr) {
    chain(sig, info, context);
    errno = saved_errno;
    return;
  }
  auto* uc = static_cast<ucontext_t*>(context);
  DecodedFault store;
  if (!decode_faulting_store(*uc, store)) {
    abort_on_faulting_store("cannot decode the store into a doorbell page", store.pc);
  }
  // A multi-element store (an AArch64 pair) may report any of its elements' addresses.
  if (store.address_known && (address < store.address || address - store.address >= store.width)) {
    abort_on_faulting_store("decoded store address differs from the fault address", store.pc);
  }
  // The FIFO carries one 64-bit value per doorbell: wider stores are refused, not truncated.
  if (store.width > 8) {
    abort_on_faulting_store("store wider than 8 bytes into a doorbell page", store.pc);
  }
  const uintptr_t start = store.address_known ? store.address : address;
  if (start < page) abort_on_faulting_store("store starts before a doorbell page", store.pc);
  const uintptr_t offset = start - page;
  if (offset + store.width > kTrapPageSize) {
    abort_on_faulting_store("store crosses the end of a doorbell page", store.pc);
  }
  entry->fifo.load(std::memory_order_relaxed)
      ->push({entry->context_id.load(std::memory_order_relaxed), static_cast<uint32_t>(offset),
              store.value});
  complete_faulting_store(*uc, store, store.exchange ? load(start, store.width) : 0);
  errno = saved_errno;
}

int install_handler_once() {
  int state = kNotInstalled;
  if (g_install_state.compare_exchange_strong(state, kInstalling, std::memory_order_acquire)) {
    struct sigaction action = {};
    action.sa_sigaction = on_sigsegv;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    // Read the previous action first: once ours is active, a foreign fault may need it.
    if (sigaction(SIGSEGV, nullptr, &g_previous) != 0 ||
        sigaction(SIGSEGV, &action, nullptr) != 0) {
      const int err = errno;
      g_install_state.store(kNotInstalled, std::memory_order_release);
      return err;
    }
    g_install_state.store(kInstalled, std::memory_order_release);
    return 0;
  }
  // Another thread is installing: a few system calls, wait for it.
  while (state == kInstalling) state = g_install_state.load(std::memory_order_acquire);
  return state == kInstalled ? 0 : install_handler_once();
}

}  // namespace

int trap_register(void* page, uint32_t context_id, DoorbellFifo* fifo) {
  const auto address = reinterpret_cast<uintptr_t>(page);
  if (address == 0 || address % kTrapPageSize != 0 || fifo == nullptr) return EINVAL;
  if (const int err = install_handler_once(); err != 0) return err;
  if (find_entry(address) != nullptr) return EEXIST;
  for (uint32_t i = 0; i < kMaxTrappedPages; ++i) {
    TrapEntry& entry = g_entries[i];
    uintptr_t expected = kFree;
    if (!entry.page.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
      continue;
    }
    entry.context_id.store(context_id, std::memory_order_relaxed);
    entry.fifo.store(fifo, std::memory_order_relaxed);
    uint32_t used = g_entries_used.load(std::memory_order_relaxed);
    while (used < i + 1 &&
           !g_entries_used.compare_exchange_weak(used, i + 1, std::memory_order_release)) {
    }
    entry.page.store(address, std::memory_order_release);
    return 0;
  }
  return ENOSPC;
}

int trap_unregister(void* page) {
  const auto address = reinterpret_cast<uintptr_t>(page);
  if (address <= kClaimed) return ENOENT;
  for (TrapEntry& entry : g_entries) {
    uintptr_t expected = address;
    if (entry.page.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel)) return 0;
  }
  return ENOENT;
}

}  // namespace mana::emu::doorbell
