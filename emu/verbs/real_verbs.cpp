#include "verbs/real_verbs.h"

#include <unistd.h>

#include <cstring>

namespace mana::emu::verbs {

void* resolve_next(const char* name, const char* version) {
  void* sym = dlvsym(RTLD_NEXT, name, version);
  if (sym == nullptr) sym = dlsym(RTLD_NEXT, name);
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
