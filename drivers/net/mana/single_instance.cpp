// SPDX-License-Identifier: BSD-3-Clause
#include "single_instance.h"

#include <dlfcn.h>
#include <link.h>

// The marker each copy exports (default visibility: dlsym finds it through the copy's handle).
extern "C" __attribute__((visibility("default"), used)) const char mana_pmd_copy_marker[] =
    "net_mana";

namespace mana {

namespace {

constexpr const char* kMarker = "mana_pmd_copy_marker";

int check_object(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* found = static_cast<std::string*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;  // the program itself
  void* handle = ::dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  void* marker = ::dlsym(handle, kMarker);
  ::dlclose(handle);
  if (marker == nullptr || marker == static_cast<const void*>(mana_pmd_copy_marker)) return 0;
  *found = info->dlpi_name;
  return 1;
}

}  // namespace

std::string other_loaded_copy() {
  std::string found;
  ::dl_iterate_phdr(check_object, &found);
  return found;
}

std::string this_copy_path() {
  Dl_info info{};
  if (::dladdr(mana_pmd_copy_marker, &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

}  // namespace mana
