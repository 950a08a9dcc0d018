// SPDX-License-Identifier: BSD-3-Clause
// Test main: `--scenario=<name>` picks the emulated machine (scenario.h) and runs the test suites
// whose names start with that scenario (e.g. "Trap", "Poll", "Split", "Limits2025", "Forward").
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "scenario.h"
#include "secondary.h"

namespace {

std::string suite_prefix(const std::string& scenario) {
  if (scenario == "limits2025") return "Limits2025";
  std::string s = scenario;
  s[0] = static_cast<char>(toupper(s[0]));
  return s;
}

// The tests are meaningless unless libmana_emu.so is preloaded: check where the symbol binds.
bool preloaded() {
  Dl_info info{};
  void* sym = dlsym(RTLD_DEFAULT, "ibv_open_device");
  return sym != nullptr && dladdr(sym, &info) != 0 && info.dli_fname != nullptr &&
         strstr(info.dli_fname, "libmana_emu") != nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int secondary = mana::emu::test::run_secondary_if_asked(argc, argv);
  if (secondary >= 0) return secondary;
  testing::InitGoogleTest(&argc, argv);
  std::string name = "trap";
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--scenario=", 11) == 0) name = argv[i] + 11;
  }
  if (!preloaded()) {
    fprintf(stderr, "run with LD_PRELOAD=<build>/emu/preload/libmana_emu.so\n");
    return 1;
  }
  const auto& s = mana::emu::test::setup_scenario(name);
  if (GTEST_FLAG_GET(filter) == "*") GTEST_FLAG_SET(filter, suite_prefix(name) + "*");
  const int rc = RUN_ALL_TESTS();
  if (!s.config.root.empty()) std::filesystem::remove_all(s.config.root);
  return rc;
}
