// SPDX-License-Identifier: BSD-3-Clause
// Burst functions: specialised at compile time for the offloads in use and chosen at dev_start.
#pragma once

#include <cstdint>

#include <ethdev_driver.h>

namespace mana {

// The RX burst's implementations (rx_vec.h): the portable scalar one, and vector kernels for the
// common completions, each handing every other one to the scalar code.
enum class RxSimd : uint8_t { kScalar, kSse41, kAvx2, kNeon };
inline constexpr RxSimd kRxSimdAll[] = {RxSimd::kScalar, RxSimd::kSse41, RxSimd::kAvx2,
                                        RxSimd::kNeon};

// The implementation this process runs (rx_simd.cpp): the widest this build has, the CPU runs and
// the EAL allows (--force-max-simd-bitwidth; 64 selects the scalar one).
RxSimd rx_simd_best();
// Whether this build has `s` and the CPU runs it (the EAL's limit aside).
bool rx_simd_supported(RxSimd s);
const char* rx_simd_name(RxSimd s);

// The burst for the offloads, with implementation `s` (rx_simd_supported) or the best one.
eth_rx_burst_t select_rx_burst(uint64_t rx_offloads, RxSimd s);
inline eth_rx_burst_t select_rx_burst(uint64_t rx_offloads) {
  return select_rx_burst(rx_offloads, rx_simd_best());
}
// The TX offloads that select a checksum burst, and those that select the multi-segment one (a TSO
// WQE has at least two SGEs).
inline constexpr uint64_t kTxCsumOffloads =
    RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
inline constexpr uint64_t kTxMultiSegOffloads =
    RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_TCP_TSO;

// `long_oob`: some TX queue's OOB template is long (vPort offset above 255); a burst chosen without
// it sends short OOBs only.
eth_tx_burst_t select_tx_burst(uint64_t tx_offloads, bool long_oob = false);
// The TX burst for a started port: its offloads and its queues' OOB templates.
eth_tx_burst_t select_port_tx_burst(const rte_eth_dev* dev);

// rte_eth_tx_prepare: validates offload requests and writes the L4 pseudo-header seeds. Returns the
// number of good packets; rte_errno is EINVAL or ENOTSUP for the first bad one.
uint16_t tx_prepare(void* queue, rte_mbuf** pkts, uint16_t n);

// Installed while the port is stopped: receive and send nothing.
uint16_t rx_burst_stopped(void* queue, rte_mbuf** pkts, uint16_t n);
uint16_t tx_burst_stopped(void* queue, rte_mbuf** pkts, uint16_t n);

// Frees the mbufs of completed TX descriptors (also used by tx_done_cleanup). Returns how many
// packets completed.
uint32_t tx_reclaim(struct TxQueue& q);

}  // namespace mana
