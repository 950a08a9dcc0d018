// SPDX-License-Identifier: BSD-3-Clause
// The real rdma-core entry points behind the interposed ones: objects that are not emulated (and
// every call when no emulator config is set) go there. Each symbol is resolved once with its
// rdma-core version, so that our own exported definitions are skipped.
#pragma once

#include <dlfcn.h>

#include <cerrno>

namespace mana::emu::verbs {

// dlvsym(RTLD_NEXT, ...), falling back to the unversioned symbol; nullptr when absent.
void* resolve_next(const char* name, const char* version);

// `static const auto real = next_symbol<decltype(&fn)>("fn", "IBVERBS_1.1");` at the call site
// resolves once (thread-safe static initialisation).
template <typename Fn>
Fn next_symbol(const char* name, const char* version) {
  return reinterpret_cast<Fn>(resolve_next(name, version));
}

}  // namespace mana::emu::verbs
