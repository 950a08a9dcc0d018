// SPDX-License-Identifier: BSD-3-Clause
// One measured round of the cost benchmark (doc/performance.md "Cost per packet"): the child
// process that mana-emu runs in lockstep mode, with one MANA PMD plugin and one configuration.
#pragma once

#include <cstdint>
#include <string>

namespace mana_bench {

struct RoundConfig {
  std::string pmd;            // the plugin (-d), or vdev:DRIVER (--vdev DRIVER0, no PCI)
  std::string file_prefix;    // EAL --file-prefix, unique per round
  uint16_t frame_bytes = 64;  // with the FCS, as on the wire
  uint16_t burst = 32;
  bool offloads = false;      // RX checksum + RSS hash, TX IPv4 + UDP checksum
  uint64_t packets = 100000;  // measured packets (after a warm-up of the same loop)
  bool no_ptypes = false;     // rte_eth_dev_set_ptypes(RTE_PTYPE_UNKNOWN), as testpmd does
  // RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE when the driver offers it, as testpmd asks by default.
  bool fast_free = false;
  // rte_eth_tx_prepare before each rte_eth_tx_burst: measured with it (kWith), not called
  // (kNone), or called outside the measured call (kApart: the burst's own cost on prepared
  // packets).
  enum class Prepare : uint8_t { kWith, kNone, kApart };
  Prepare prepare = Prepare::kWith;
  // RX and TX queues per port (RSS spreads the frames: each TX queue's frames carry a UDP source
  // port that hashes to the RX queue of the same index), and ports (the emulated VF's, each on its
  // own loop wire). Every step sends one burst on every TX queue of every port.
  uint16_t queues = 1;
  uint16_t ports = 1;
  // Descriptors of every RX and TX ring (64, 128 or 256): with the queue count, how many
  // mbufs are in flight, so how far the frames touched in a step lie from the caches.
  uint16_t ring = 256;
  // EAL --force-max-simd-bitwidth (64, 128, 256, 512), or 0 for the EAL's default: which of a
  // driver's vector implementations runs (doc/guide.md "RX implementation").
  uint16_t simd_bitwidth = 0;
};

// Runs the round and prints its one result line to stdout (round_result.h); returns the process
// exit status (0 also when the configuration is "n/a" for this driver, with the reason).
int run_round(const RoundConfig& config);

}  // namespace mana_bench
