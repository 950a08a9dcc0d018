// SPDX-License-Identifier: BSD-3-Clause
#include "round_result.h"

#include <cstdio>
#include <sstream>

namespace mana_bench {

std::string format_result(const RoundResult& r) {
  if (!r.measured) return "n/a " + r.not_applicable + "\n";
  char line[128];
  std::snprintf(line, sizeof(line), "result %.2f %.2f %llu %llu\n", r.rx_cycles, r.tx_cycles,
                r.packets, r.all_packets);
  return line;
}

bool parse_result(const std::string& text, RoundResult* out) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("n/a ")) {
      *out = RoundResult{};
      out->not_applicable = line.substr(4);
      return true;
    }
    RoundResult r;
    if (std::sscanf(line.c_str(), "result %lf %lf %llu %llu", &r.rx_cycles, &r.tx_cycles,
                    &r.packets, &r.all_packets) == 4) {
      r.measured = true;
      *out = r;
      return true;
    }
  }
  return false;
}

}  // namespace mana_bench
