// SPDX-License-Identifier: BSD-3-Clause
#include "vmbus/guest_memory.h"

#include <dlfcn.h>

namespace mana::emu::vmbus {

namespace {
constexpr uint64_t kPage = 4096;
// Guest physical addresses are 52 bits at most (x86-64); a page number beyond is malformed.
constexpr uint64_t kMaxPage = (uint64_t{1} << 52) / kPage;

SharedGuestMemory::Iova2Virt dpdk_translator() {
  return reinterpret_cast<SharedGuestMemory::Iova2Virt>(dlsym(RTLD_DEFAULT, "rte_mem_iova2virt"));
}
}  // namespace

SharedGuestMemory::SharedGuestMemory(uint32_t receive_gpadl, std::span<uint8_t> receive,
                                     uint32_t send_gpadl, std::span<uint8_t> send)
    : receive_gpadl_(receive_gpadl),
      receive_(receive),
      send_gpadl_(send_gpadl),
      send_(send),
      iova2virt_(dpdk_translator()) {}

std::span<uint8_t> SharedGuestMemory::guest_range(uint64_t page, uint32_t offset, uint32_t len) {
  if (page >= kMaxPage || len == 0) return {};
  const uint64_t first = page * kPage + offset;
  const uint64_t last = first + len - 1;
  if (iova2virt_ == nullptr) return {reinterpret_cast<uint8_t*>(first), len};
  // DPDK memory is contiguous in IOVA within a page, and within a segment across pages: check
  // that the range's last byte translates to where the first byte's address says it should be.
  auto* va = static_cast<uint8_t*>(iova2virt_(first));
  if (va == nullptr) return {};
  if ((first / kPage) != (last / kPage) && iova2virt_(last) != va + (last - first)) return {};
  return {va, len};
}

}  // namespace mana::emu::vmbus
