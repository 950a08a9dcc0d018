// SPDX-License-Identifier: BSD-3-Clause
// The definition of a symbol that this library interposes, as the next object in the lookup order
// (libc) has it: what an interposer calls for the calls that are not the emulator's.
#pragma once

#include <dlfcn.h>

namespace mana::emu::preload {

template <typename Fn>
Fn libc_next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace mana::emu::preload
