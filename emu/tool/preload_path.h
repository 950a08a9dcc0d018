// SPDX-License-Identifier: BSD-3-Clause
// Where `mana-emu run` finds libmana_emu.so when --preload is not given.
#pragma once

#include <string>

namespace mana::emu {

// Candidates in order: <dir of exe>/../preload/libmana_emu.so (the build tree puts mana-emu in
// <builddir>/emu/tool and the library in <builddir>/emu/preload), then <libdir>/libmana_emu.so
// (installed). Returns the absolute path of the first that exists, or "" with `error` set.
std::string find_preload(const std::string& exe_path, const std::string& libdir,
                         std::string* error);

// Absolute, symlink-free form of an existing file given with --preload; "" with `error` when it
// does not exist or its path cannot be used in LD_PRELOAD (spaces or colons).
std::string checked_preload(const std::string& path, std::string* error);

}  // namespace mana::emu
