// SPDX-License-Identifier: BSD-3-Clause
// The guest memory the host reaches (doc/hardware.md §11.2 "Guest memory"): the receive and send
// buffers, which uio_hv_generic shared with the host at bind time (here: the run folder's map3 and
// map4 files, mapped by both sides), and guest pages named by GPA packets. DPDK's net_netvsc names
// those by IOVA >> 12; the host runs in the guest's own process, so it translates IOVAs with
// DPDK's rte_mem_iova2virt when the process has it (IOVA-as-PA and IOVA-as-VA alike), and takes
// the page number as a virtual address otherwise (a process without DPDK, as the unit tests).
#pragma once

#include <cstdint>
#include <span>

#include "netvsc/host_interface.h"

namespace mana::emu::vmbus {

class SharedGuestMemory final : public netvsc::GuestMemory {
 public:
  using Iova2Virt = void* (*)(uint64_t iova);

  SharedGuestMemory(uint32_t receive_gpadl, std::span<uint8_t> receive, uint32_t send_gpadl,
                    std::span<uint8_t> send);

  uint32_t receive_buffer_gpadl() const override { return receive_gpadl_; }
  std::span<uint8_t> receive_buffer() override { return receive_; }
  uint32_t send_buffer_gpadl() const override { return send_gpadl_; }
  std::span<uint8_t> send_buffer() override { return send_; }
  std::span<uint8_t> guest_range(uint64_t page, uint32_t offset, uint32_t len) override;

  // Tests: the translation to use (nullptr: page numbers are virtual addresses).
  void set_translator(Iova2Virt fn) { iova2virt_ = fn; }

 private:
  uint32_t receive_gpadl_;
  std::span<uint8_t> receive_;
  uint32_t send_gpadl_;
  std::span<uint8_t> send_;
  Iova2Virt iova2virt_;
};

}  // namespace mana::emu::vmbus
