// SPDX-License-Identifier: BSD-3-Clause
// The one line a round prints on stdout and the orchestrator parses:
//   result <rx cycles/packet> <tx cycles/packet> <packets> <packets incl. warm-up>
//   n/a <reason ...>
#pragma once

#include <string>

namespace mana_bench {

struct RoundResult {
  bool measured = false;
  double rx_cycles = 0;  // per packet
  double tx_cycles = 0;
  unsigned long long packets = 0;      // measured, each way
  unsigned long long all_packets = 0;  // through bench_rx and bench_tx each, warm-up included
  std::string not_applicable;          // the driver's reason when !measured
};

std::string format_result(const RoundResult& r);
// False when `text` holds no result line.
bool parse_result(const std::string& text, RoundResult* out);

}  // namespace mana_bench
