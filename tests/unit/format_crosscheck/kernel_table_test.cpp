// SPDX-License-Identifier: BSD-3-Clause
// What we define that DPDK 22.11's net_mana (mana.h, gdma.c) does not, checked against the Linux
// kernel's MANA driver instead. The kernel's headers are not available to compile against, so each
// entry below records a definition as read in the kernel source (torvalds/linux, file named per
// entry, the revisions doc/hardware.md §0 lists; no kernel code is copied), and the test compares
// ours with it. Where DPDK defines the inputs of a kernel formula, the formula is also applied to
// DPDK's constants.
//
// Notably NOT in this table because DPDK 22.11's mana.h already defines them (layout test):
// long_vport_offset (TX long OOB dw3 [27:16]), the VLAN insert fields, CQE_RX_COALESCED_4 and the
// four packet_info entries of an RX CQE.
#include "dpdk_mana.h"

#include <bit>

#include <gtest/gtest.h>

#include "mana/gdma_format.h"

namespace {

namespace hw = mana::hw;

// A field: dword of the structure, lowest bit and width as the kernel declares them.
struct KernelField {
  const char* name;
  const char* kernel_file;
  unsigned dword;
  unsigned lo;
  unsigned width;
  unsigned our_dword;
  uint32_t our_mask;  // F::set(0, ~0): the field's bits in its word
};

// A value the kernel defines and DPDK 22.11 does not.
struct KernelValue {
  const char* name;
  const char* kernel_file;
  uint32_t kernel;
  uint32_t ours;
};

template <class F>
constexpr uint32_t mask_of() {
  return F::set(0, 0xFFFFFFFFu);
}

TEST(KernelTable, Fields) {
  const KernelField fields[] = {
      // struct mana_cqe_header { cqe_type:6; client_type:2; vendor_err:24 }: the field is in DPDK
      // too, but what may be written in it (next table) comes from the kernel only.
      {"mana_cqe_header.client_type", "include/net/mana/mana.h", 0, 6, 2, 0,
       mask_of<hw::Cqe::ClientType>()},
  };
  for (const KernelField& f : fields) {
    EXPECT_EQ(f.our_dword, f.dword) << f.name << " (" << f.kernel_file << ")";
    EXPECT_EQ(static_cast<unsigned>(std::countr_zero(f.our_mask)), f.lo) << f.name;
    EXPECT_EQ(static_cast<unsigned>(std::popcount(f.our_mask)), f.width) << f.name;
  }
}

TEST(KernelTable, Values) {
  const KernelValue values[] = {
      // #define MANA_CQE_COMPLETION 1; the kernel's TX completion handler drops any CQE whose
      // client_type differs (drivers/net/ethernet/microsoft/mana/mana_en.c, mana_poll_tx_cq).
      {"MANA_CQE_COMPLETION", "include/net/mana/mana.h", 1, hw::kClientTypeCompletion},
      // MAX_RX_WQE_SGL_ENTRIES = (GDMA_MAX_RQE_SIZE 256 - sizeof(struct gdma_sge) 16) / 16.
      {"MAX_RX_WQE_SGL_ENTRIES", "include/net/mana/gdma.h", (256 - 16) / 16, hw::kMaxRxSge},
      // MAX_TX_WQE_SGL_ENTRIES = (GDMA_MAX_SQE_SIZE 512 - 16 - INLINE_OOB_SMALL_SIZE 8) / 16; DPDK:
      // MAX_SGL_ENTRIES_FOR_TRANSMIT, checked against ours in the layout test.
      {"MAX_TX_WQE_SGL_ENTRIES", "include/net/mana/gdma.h", (512 - 16 - 8) / 16, hw::kMaxTxSge},
  };
  for (const KernelValue& v : values)
    EXPECT_EQ(v.ours, v.kernel) << v.name << " (" << v.kernel_file << ")";
  // The kernel derives the SGE limits from the WQE sizes DPDK also defines: the same arithmetic on
  // DPDK's constants must give the kernel's numbers.
  EXPECT_EQ((MAX_RX_WQE_SIZE - sizeof(gdma_sgl_element)) / sizeof(gdma_sgl_element), hw::kMaxRxSge);
  EXPECT_EQ((MAX_TX_WQE_SIZE - sizeof(gdma_sgl_element) - INLINE_OOB_SMALL_SIZE_IN_BYTES) /
                sizeof(gdma_sgl_element),
            hw::kMaxTxSge);
}

}  // namespace
