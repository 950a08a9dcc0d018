#include "devargs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <rte_kvargs.h>

namespace mana {
namespace {

struct ParseState {
  Devargs* out;
  char* error;
  size_t error_len;
};

int on_mac(const char* /*key*/, const char* value, void* opaque) {
  auto* st = static_cast<ParseState*>(opaque);
  Devargs& d = *st->out;
  if (d.mac_count == kMaxMacDevargs) {
    snprintf(st->error, st->error_len,
             "more than %u mac= devargs: a MANA function has at most %u ports", kMaxMacDevargs,
             kMaxMacDevargs);
    return -EINVAL;
  }
  rte_ether_addr mac;
  if (value == nullptr || rte_ether_unformat_addr(value, &mac) != 0) {
    snprintf(st->error, st->error_len,
             "malformed MAC '%s' in mac= devargs: expected xx:xx:xx:xx:xx:xx", value ? value : "");
    return -EINVAL;
  }
  for (unsigned i = 0; i < d.mac_count; i++) {
    if (rte_is_same_ether_addr(&d.macs[i], &mac)) {
      snprintf(st->error, st->error_len,
               "MAC %s is given twice in mac= devargs: give each port once", value);
      return -EINVAL;
    }
  }
  d.macs[d.mac_count++] = mac;
  return 0;
}

}  // namespace

bool Devargs::wants(const rte_ether_addr& mac) const {
  if (mac_count == 0) return true;
  for (unsigned i = 0; i < mac_count; i++)
    if (rte_is_same_ether_addr(&macs[i], &mac)) return true;
  return false;
}

int parse_devargs(const char* args, Devargs& out, char* error, size_t error_len) {
  out = Devargs{};
  if (error_len) error[0] = '\0';
  if (args == nullptr || args[0] == '\0') return 0;

  static const char* const keys[] = {kDevargsMac, nullptr};
  rte_kvargs* kv = rte_kvargs_parse(args, keys);
  if (kv == nullptr) {
    snprintf(error, error_len, "cannot parse devargs '%s': the only key is %s", args, kDevargsHelp);
    return -EINVAL;
  }
  ParseState st{&out, error, error_len};
  int rc = rte_kvargs_process(kv, kDevargsMac, on_mac, &st);
  rte_kvargs_free(kv);
  if (rc != 0) {
    if (error_len && error[0] == '\0') snprintf(error, error_len, "invalid devargs '%s'", args);
    out = Devargs{};
    return -EINVAL;
  }
  return 0;
}

}  // namespace mana
