// SPDX-License-Identifier: BSD-3-Clause
// Stands in for unit-format-crosscheck when DPDK's net_mana source tree was not found at configure
// time: meson reports exit code 77 as SKIP.
#include <cstdio>

int main() {
  std::fprintf(
      stderr,
      "unit-format-crosscheck: SKIP: DPDK's net_mana source (mana.h, gdma.c) is not in %s: "
      "run scripts/fetch-dpdk-sdk.sh, or configure -Ddpdk_mana_src=DIR, then reconfigure "
      "the build (meson setup --reconfigure)\n",
      MANA_DPDK_SRC_EXPECTED);
  return 77;
}
