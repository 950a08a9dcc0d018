// SPDX-License-Identifier: BSD-3-Clause
// mana_cost_bench: the cost of MANA PMDs' burst functions on the emulator in lockstep mode
// (doc/performance.md "Cost per packet"). One invocation measures every `--pmd` (ours and DPDK's
// own net_mana, say) over several rounds; in each round every configuration runs once per driver,
// the drivers' order alternating, so that both see the same machine state. Each measurement is a
// child process (one EAL per driver: two plugins named net_mana cannot share one) started as
//   mana-emu run --lockstep --doorbell poll -- mana_cost_bench --round ...
// that prints one result line (round_result.h). The table gives per driver and configuration the
// median of the rounds' cycles/packet and their range.
//
//   mana_cost_bench --pmd NAME=PLUGIN [--pmd NAME=PLUGIN ...] [--via NAME=PROGRAM ...]
//                   [--rounds N] [--packets N] [--sizes 64,512,1518] [--bursts 32,8]
//                   [--queues 1,2,4,8,16] [--ports 1|2] [--mana-emu PATH] [--smoke]
// --queues: RX and TX queues per port, RSS spreading the frames (doc/performance.md "Scaling with
// queues and ports"); --ports 2: the emulated VF's two ports (mana-emu run --ports 2).
// --simd-bitwidth N: each round's EAL gets --force-max-simd-bitwidth=N, which caps the vector
// implementation a driver picks (128: SSE4.1 rather than AVX2; doc/guide.md "RX implementation").
// PLUGIN "vdev:net_null" measures DPDK's net_null instead (no plugin, the emulated VF unused): the
// driver-independent floor of the ethdev dispatch and the mbuf library. `--via NAME=PROGRAM`
// (words split at spaces) runs NAME's rounds as `PROGRAM --round ...` instead of under this
// mana-emu with this binary: a wrapper that runs another build of both, e.g. in a chroot with
// another DPDK (scripts/bench-cost.sh --trixie), so that two DPDK versions alternate in one run.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "round.h"
#include "round_result.h"

#ifndef MANA_EMU_PATH
#define MANA_EMU_PATH "mana-emu"
#endif

namespace mana_bench {
namespace {

constexpr unsigned kMaxQueues = 16;  // per port
constexpr unsigned kMaxPorts = 2;

struct Driver {
  std::string name, plugin;
  std::string via;  // the program that runs this driver's rounds, or "" (mana-emu + this binary)
};

struct Options {
  std::vector<Driver> drivers;
  std::string mana_emu = MANA_EMU_PATH;
  unsigned rounds = 5;
  unsigned long long packets = 100000;
  std::vector<unsigned> sizes = {64, 512, 1518};
  std::vector<unsigned> bursts = {32, 8};
  std::vector<unsigned> queues = {1};
  unsigned ports = 1;
  bool smoke = false;
  // --ptypes, --fast-free, --prepare, --simd-bitwidth, --ring: passed to each round
  std::vector<std::string> round_options;
};

// A ring size option's value: 64, 128 or 256 (the emulator's default limit, rdma-core 44's), or 0.
uint16_t ring_size(const std::string& v) {
  char* end = nullptr;
  const unsigned long n = std::strtoul(v.c_str(), &end, 10);
  return end != v.c_str() && *end == '\0' && (n == 64 || n == 128 || n == 256)
             ? static_cast<uint16_t>(n)
             : 0;
}

// The round options the parent passes through unchanged, with their values.
bool is_round_switch(const std::string& k, const std::string& v) {
  if (k == "--ptypes") return v == "all" || v == "none";
  if (k == "--fast-free") return v == "on" || v == "off";
  if (k == "--prepare") return v == "on" || v == "off" || v == "apart";
  if (k == "--simd-bitwidth") return v == "64" || v == "128" || v == "256" || v == "512";
  if (k == "--ring") return ring_size(v) != 0;
  return false;
}

struct Config {
  unsigned size, burst;
  bool offloads;
  unsigned queues;
};

struct Cell {  // one driver, one configuration, every round
  std::vector<double> rx, tx;
  std::string not_applicable;
  bool failed = false;
};

int usage(const std::string& why) {
  std::fprintf(
      stderr,
      "mana_cost_bench: %s\nusage: mana_cost_bench --pmd NAME=PLUGIN [--pmd ...] "
      "[--via NAME=PROGRAM] [--rounds N] [--packets N] [--sizes 64,512,1518] [--bursts 32,8] "
      "[--ptypes all|none] [--fast-free on|off] [--prepare on|off|apart] "
      "[--simd-bitwidth 64|128|256|512] [--ring 64|128|256] [--queues 1,2,4,8,16] "
      "[--ports 1|2] [--mana-emu PATH] [--smoke]\n",
      why.c_str());
  return 2;
}

bool parse_list(const std::string& text, unsigned max, std::vector<unsigned>* out) {
  out->clear();
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    char* end = nullptr;
    const unsigned long v = std::strtoul(text.c_str() + pos, &end, 10);
    if (end != text.c_str() + comma || v == 0 || v > max) return false;
    out->push_back(static_cast<unsigned>(v));
    pos = comma + 1;
  }
  return !out->empty();
}

bool parse_number(const std::string& text, unsigned long long* out) {
  char* end = nullptr;
  *out = std::strtoull(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && *out > 0;
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Runs argv with stdout into a pipe; its output, and its exit status in *status.
std::string run_captured(const std::vector<std::string>& args, int* status) {
  int fds[2];
  if (pipe(fds) != 0) {
    *status = -1;
    return "";
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::perror(argv[0]);
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int wstatus = 0;
  *status =
      pid > 0 && waitpid(pid, &wstatus, 0) == pid && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  return out;
}

void measure(const Options& o, const Driver& d, const Config& c, unsigned round, Cell* cell) {
  const std::string prefix = "mana-cost-" + std::to_string(getpid()) + "-" + d.name;
  std::vector<std::string> args;
  for (size_t pos = 0; pos < d.via.size();) {  // PROGRAM [ARG ...], split at spaces
    const size_t space = std::min(d.via.find(' ', pos), d.via.size());
    if (space > pos) args.push_back(d.via.substr(pos, space - pos));
    pos = space + 1;
  }
  if (d.via.empty()) {
    args = {o.mana_emu, "run", "--lockstep", "--doorbell", "poll"};
    if (o.ports > 1) args.insert(args.end(), {"--ports", std::to_string(o.ports)});
    args.insert(args.end(), {"--", self_exe()});
  }
  const std::vector<std::string> round_args = {"--round",
                                               "--pmd",
                                               d.plugin,
                                               "--size",
                                               std::to_string(c.size),
                                               "--burst",
                                               std::to_string(c.burst),
                                               "--offloads",
                                               c.offloads ? "on" : "off",
                                               "--packets",
                                               std::to_string(o.packets),
                                               "--queues",
                                               std::to_string(c.queues),
                                               "--ports",
                                               std::to_string(o.ports),
                                               "--file-prefix",
                                               prefix};
  args.insert(args.end(), round_args.begin(), round_args.end());
  args.insert(args.end(), o.round_options.begin(), o.round_options.end());
  int status = 0;
  const std::string out = run_captured(args, &status);
  RoundResult r;
  if (status != 0 || !parse_result(out, &r)) {
    std::fprintf(stderr,
                 "mana_cost_bench: %s, %u B, burst %u, offloads %s, %u queue(s), %u port(s), "
                 "round %u failed\n",
                 d.name.c_str(), c.size, c.burst, c.offloads ? "on" : "off", c.queues, o.ports,
                 round + 1);
    cell->failed = true;
  } else if (!r.measured) {
    cell->not_applicable = r.not_applicable;
  } else {
    cell->rx.push_back(r.rx_cycles);
    cell->tx.push_back(r.tx_cycles);
  }
}

std::string summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  char text[96];
  std::snprintf(text, sizeof(text), "%.1f (%.1f-%.1f)", median, v.front(), v.back());
  return text;
}

int orchestrate(const Options& o) {
  std::vector<Config> configs;
  for (unsigned queues : o.queues)
    for (unsigned size : o.sizes)
      for (unsigned burst : o.bursts)
        for (bool offloads : {false, true}) configs.push_back({size, burst, offloads, queues});
  // The ports and queues columns only where they vary from one queue on one port.
  const bool scaling = o.ports != 1 || o.queues != std::vector<unsigned>{1};
  std::vector<std::vector<Cell>> cells(configs.size(), std::vector<Cell>(o.drivers.size()));
  for (unsigned round = 0; round < o.rounds; round++) {
    for (size_t c = 0; c < configs.size(); c++) {
      for (size_t i = 0; i < o.drivers.size(); i++) {
        // Alternate the order so that no driver always runs first.
        const size_t d = (round + c) % 2 ? o.drivers.size() - 1 - i : i;
        measure(o, o.drivers[d], configs[c], round, &cells[c][d]);
      }
    }
  }
  std::printf(
      "TSC cycles per packet in rte_eth_rx_burst and rte_eth_tx_prepare+rte_eth_tx_burst, "
      "median (min-max) of %u round(s) of %llu packets\n\n",
      o.rounds, o.packets);
  if (scaling) std::printf("| ports | queues ");
  std::printf(
      "| frame | burst | offloads | driver | rx_burst cycles/pkt | tx_burst cycles/pkt |\n");
  if (scaling) std::printf("|---|---");
  std::printf("|---|---|---|---|---|---|\n");
  bool failed = false;
  std::vector<bool> measured(o.drivers.size(), false);
  for (size_t c = 0; c < configs.size(); c++) {
    for (size_t d = 0; d < o.drivers.size(); d++) {
      const Cell& cell = cells[c][d];
      std::string rx = "failed", tx = "failed";
      if (!cell.failed && !cell.not_applicable.empty()) {
        rx = tx = "n/a: " + cell.not_applicable;
      } else if (!cell.failed) {
        rx = summary(cell.rx);
        tx = summary(cell.tx);
        measured[d] = true;
      }
      failed |= cell.failed;
      if (scaling) std::printf("| %u | %u ", o.ports, configs[c].queues);
      std::printf("| %u B | %u | %s | %s | %s | %s |\n", configs[c].size, configs[c].burst,
                  configs[c].offloads ? "on" : "off", o.drivers[d].name.c_str(), rx.c_str(),
                  tx.c_str());
    }
  }
  for (size_t d = 0; d < o.drivers.size(); d++) {
    if (!measured[d]) {
      std::fprintf(stderr, "mana_cost_bench: %s measured no configuration\n",
                   o.drivers[d].name.c_str());
      failed = true;
    }
  }
  return failed ? 1 : 0;
}

// The child: `--round --pmd PLUGIN --size S --burst B --offloads on|off --packets N
// --file-prefix P [--ptypes all|none] [--fast-free on|off] [--prepare on|off|apart] [--queues N]
// [--ports N] [--simd-bitwidth 64|128|256|512] [--ring N]`, run under mana-emu run --lockstep
// (--ports N for N ports).
int round_main(const std::vector<std::string>& args) {
  RoundConfig c;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& v = args[i + 1];
    unsigned long long n = 0;
    if (k == "--pmd") {
      c.pmd = v;
    } else if (k == "--file-prefix") {
      c.file_prefix = v;
    } else if (k == "--offloads" && (v == "on" || v == "off")) {
      c.offloads = v == "on";
    } else if (k == "--size" && parse_number(v, &n) && n >= 64 && n <= 1518) {
      c.frame_bytes = static_cast<uint16_t>(n);
    } else if (k == "--burst" && parse_number(v, &n) && n <= 64) {
      c.burst = static_cast<uint16_t>(n);
    } else if (k == "--packets" && parse_number(v, &n)) {
      c.packets = n;
    } else if (k == "--queues" && parse_number(v, &n) && n <= kMaxQueues) {
      c.queues = static_cast<uint16_t>(n);
    } else if (k == "--ports" && parse_number(v, &n) && n <= kMaxPorts) {
      c.ports = static_cast<uint16_t>(n);
    } else if (k == "--ptypes" && (v == "all" || v == "none")) {
      c.no_ptypes = v == "none";
    } else if (k == "--fast-free" && (v == "on" || v == "off")) {
      c.fast_free = v == "on";
    } else if (k == "--prepare" && (v == "on" || v == "off" || v == "apart")) {
      c.prepare = v == "on"    ? RoundConfig::Prepare::kWith
                  : v == "off" ? RoundConfig::Prepare::kNone
                               : RoundConfig::Prepare::kApart;
    } else if (k == "--simd-bitwidth" && is_round_switch(k, v) && parse_number(v, &n)) {
      c.simd_bitwidth = static_cast<uint16_t>(n);
    } else if (k == "--ring" && ring_size(v) != 0) {
      c.ring = ring_size(v);
    } else {
      return usage("--round: bad option " + k + " " + v);
    }
  }
  if (args.size() % 2 != 0 || c.pmd.empty() || c.file_prefix.empty())
    return usage("--round needs --pmd and --file-prefix");
  return run_round(c);
}

}  // namespace
}  // namespace mana_bench

int main(int argc, char** argv) {
  using namespace mana_bench;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--round") return round_main({args.begin() + 1, args.end()});
  Options o;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& k = args[i];
    if (k == "--smoke") {
      o.smoke = true;
      continue;
    }
    if (i + 1 >= args.size()) return usage(k + " needs a value");
    const std::string& v = args[++i];
    unsigned long long n = 0;
    if (k == "--pmd") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) return usage("--pmd NAME=PLUGIN");
      o.drivers.push_back({v.substr(0, eq), v.substr(eq + 1), ""});
    } else if (k == "--via") {
      const size_t eq = v.find('=');
      auto d = std::find_if(o.drivers.begin(), o.drivers.end(),
                            [&](const Driver& x) { return x.name == v.substr(0, eq); });
      if (eq == std::string::npos || d == o.drivers.end())
        return usage("--via NAME=PROGRAM after --pmd NAME=...");
      d->via = v.substr(eq + 1);
    } else if (k == "--mana-emu") {
      o.mana_emu = v;
    } else if (k == "--rounds" && parse_number(v, &n) && n <= 1000) {
      o.rounds = static_cast<unsigned>(n);
    } else if (k == "--packets" && parse_number(v, &n)) {
      o.packets = n;
    } else if (k == "--sizes") {
      if (!parse_list(v, 1518, &o.sizes) ||
          std::any_of(o.sizes.begin(), o.sizes.end(), [](unsigned s) { return s < 64; }))
        return usage("--sizes: frame sizes 64..1518");
    } else if (k == "--bursts") {
      if (!parse_list(v, 64, &o.bursts)) return usage("--bursts: bursts 1..64");
    } else if (k == "--queues") {
      if (!parse_list(v, kMaxQueues, &o.queues)) return usage("--queues: queue counts 1..16");
    } else if (k == "--ports" && parse_number(v, &n) && n <= kMaxPorts) {
      o.ports = static_cast<unsigned>(n);
    } else if (is_round_switch(k, v)) {
      o.round_options.insert(o.round_options.end(), {k, v});
    } else {
      return usage("bad option " + k + " " + v);
    }
  }
  if (o.drivers.empty()) return usage("no --pmd");
  if (o.smoke) {  // CI: that every driver runs, not what it costs
    o.rounds = 1;
    o.packets = 2000;
    o.sizes = {64};
    o.bursts = {32};
  }
  return orchestrate(o);
}
