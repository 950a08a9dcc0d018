// SPDX-License-Identifier: BSD-3-Clause
// A stand-in for libmana_emu.so in the mana-emu tests: proves that a process was started with it
// preloaded by leaving a mark in the environment its children inherit.
#include <cstdlib>

__attribute__((constructor)) static void mark_preloaded() {
  ::setenv("MANA_EMU_TEST_PRELOADED", "1", 1);
}
