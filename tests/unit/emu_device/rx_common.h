// SPDX-License-Identifier: BSD-3-Clause
// RX completions as the tests read them.
#pragma once

#include <vector>

#include "driver.h"

namespace mana::emu::test {

struct RxCompletion {
  uint32_t type = 0, vendor_err = 0, wq = 0, is_sq = 0, dw1 = 0, wqe_offset = 0;
  uint32_t len[4] = {}, hash[4] = {};
};

inline std::vector<RxCompletion> drain_rx(CqRing& cq) {
  std::vector<RxCompletion> out;
  while (const hw::Cqe* c = cq.next()) {
    RxCompletion r;
    r.type = c->type();
    r.vendor_err = hw::Cqe::VendorErr::get(c->dw[0]);
    r.wq = hw::Cqe::WqNum::get(c->dw[hw::Cqe::kOwnerDword]);
    r.is_sq = hw::Cqe::IsSq::get(c->dw[hw::Cqe::kOwnerDword]);
    r.dw1 = c->dw[hw::Cqe::kRxFlagsDword];
    r.wqe_offset = c->dw[hw::Cqe::kRxWqeOffsetDword];
    for (unsigned k = 0; k < 4; ++k) {
      r.len[k] = hw::RxPacketInfo::Length::get(c->rx_packet(k).dw0);
      r.hash[k] = c->rx_packet(k).packet_hash;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace mana::emu::test
