// SPDX-License-Identifier: BSD-3-Clause
#include "tool/preload_path.h"

#include <climits>
#include <cstdlib>
#include <vector>

namespace mana::emu {

namespace {

constexpr const char* kLibraryName = "libmana_emu.so";

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

std::string dir_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

std::string checked_preload(const std::string& path, std::string* error) {
  std::string abs = real_path(path);
  if (abs.empty()) {
    *error = "preload library " + path + " not found";
    return "";
  }
  if (abs.find_first_of(" \t:") != std::string::npos) {
    *error = "preload library path " + abs + " contains a space or ':' (LD_PRELOAD cannot hold it)";
    return "";
  }
  return abs;
}

std::string find_preload(const std::string& exe_path, const std::string& libdir,
                         std::string* error) {
  const std::vector<std::string> candidates = {
      dir_of(exe_path) + "/../preload/" + kLibraryName,
      libdir + "/" + kLibraryName,
  };
  for (const std::string& candidate : candidates) {
    if (!real_path(candidate).empty()) return checked_preload(candidate, error);
  }
  *error = std::string("cannot find ") + kLibraryName + " (looked at " + candidates[0] + " and " +
           candidates[1] + "); build emu/preload or pass --preload PATH";
  return "";
}

}  // namespace mana::emu
