// SPDX-License-Identifier: BSD-3-Clause
#include "verbs/real_verbs.h"

#include <unistd.h>

#include <cstring>

namespace mana::emu::verbs {
namespace {

// The real library that defines `version`'s symbols. A DPDK plugin loaded with EAL's -d is
// dlopen()ed with local scope, and so is the libibverbs it brings: RTLD_NEXT does not see it then.
void* real_library(const char* version) {
  const bool mana = version != nullptr && std::strncmp(version, "MANA_", 5) == 0;
  const char* soname = mana ? "libmana.so.1" : "libibverbs.so.1";
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  return handle != nullptr ? handle : dlopen(soname, RTLD_NOW | RTLD_LOCAL);
}

}  // namespace

void* resolve_next(const char* name, const char* version) {
  void* sym = dlvsym(RTLD_NEXT, name, version);
  if (sym == nullptr) sym = dlsym(RTLD_NEXT, name);
  if (sym == nullptr) {
    if (void* lib = real_library(version)) {
      sym = dlvsym(lib, name, version);
      if (sym == nullptr) sym = dlsym(lib, name);
    }
  }
  if (sym == nullptr) {
    // Not fatal: the caller reports ENOSYS. Say why once per symbol (write(2): no stdio state).
    static const char prefix[] = "mana-emu: real rdma-core symbol not found: ";
    (void)!write(2, prefix, sizeof(prefix) - 1);
    (void)!write(2, name, strlen(name));
    (void)!write(2, "\n", 1);
  }
  return sym;
}

}  // namespace mana::emu::verbs
