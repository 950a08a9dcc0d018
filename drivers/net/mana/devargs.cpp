// SPDX-License-Identifier: BSD-3-Clause
#include "devargs.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <rte_devargs.h>
#include <rte_kvargs.h>
#include <rte_pci.h>

#include "mana_log.h"

namespace mana {
namespace {

// Errors quote at most this much of the user's text, so that the reason and the hint always fit
// the caller's error buffer (256 bytes in probe.cpp), whatever the length of the devargs.
constexpr size_t kQuoteMax = 48;
// Room for the quote, its ellipsis and "(<20 digits> characters)".
constexpr size_t kQuotedSize = kQuoteMax + 48;

// `text` quoted for an error line: non-printable bytes as '?', long text cut with its length.
void quote(const char* text, char* out, size_t out_len) {
  const size_t len = strlen(text);
  const size_t shown = len > kQuoteMax ? kQuoteMax : len;
  char buf[kQuoteMax + 1];
  for (size_t i = 0; i < shown; i++)
    buf[i] = isprint(static_cast<unsigned char>(text[i])) ? text[i] : '?';
  buf[shown] = '\0';
  if (len > shown)
    snprintf(out, out_len, "'%s...' (%zu characters)", buf, len);
  else
    snprintf(out, out_len, "'%s'", buf);
}

struct ParseState {
  Devargs* out;
  char* error;
  size_t error_len;
  bool recovery_timeout_seen = false;
  bool tx_stall_timeout_seen = false;
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
    char quoted[kQuotedSize];
    quote(value ? value : "", quoted, sizeof(quoted));
    snprintf(st->error, st->error_len,
             "malformed MAC %s in mac= devargs: expected xx:xx:xx:xx:xx:xx", quoted);
    return -EINVAL;
  }
  for (unsigned i = 0; i < d.mac_count; i++) {
    if (rte_is_same_ether_addr(&d.macs[i], &mac)) {
      char text[RTE_ETHER_ADDR_FMT_SIZE];
      rte_ether_format_addr(text, sizeof(text), &mac);
      snprintf(st->error, st->error_len,
               "MAC %s is given twice in mac= devargs: give each port once", text);
      return -EINVAL;
    }
  }
  d.macs[d.mac_count++] = mac;
  return 0;
}

// A number of seconds from 0 (`zero_means`) to `max` into `*out`, given once (`*seen`): which of
// two values was meant is not for the driver to guess (as a MAC given twice).
int parse_seconds(ParseState* st, const char* key, const char* value, unsigned max,
                  const char* zero_means, bool* seen, unsigned* out) {
  if (*seen) {
    snprintf(st->error, st->error_len, "%s is given twice in devargs: give it once", key);
    return -EINVAL;
  }
  *seen = true;
  char* end = nullptr;
  errno = 0;
  const unsigned long v = value ? strtoul(value, &end, 10) : 0;
  if (value == nullptr || !isdigit(static_cast<unsigned char>(value[0])) || *end != '\0' ||
      errno != 0 || v > max) {
    char quoted[kQuotedSize];
    quote(value ? value : "", quoted, sizeof(quoted));
    snprintf(st->error, st->error_len, "bad %s %s: expected seconds from 0 (%s) to %u", key, quoted,
             zero_means, max);
    return -EINVAL;
  }
  *out = static_cast<unsigned>(v);
  return 0;
}

int on_recovery_timeout(const char* key, const char* value, void* opaque) {
  auto* st = static_cast<ParseState*>(opaque);
  return parse_seconds(st, key, value, kMaxRecoveryTimeout, "no recovery",
                       &st->recovery_timeout_seen, &st->out->recovery_timeout_s);
}

int on_tx_stall_timeout(const char* key, const char* value, void* opaque) {
  auto* st = static_cast<ParseState*>(opaque);
  return parse_seconds(st, key, value, kMaxTxStallTimeout, "no watchdog",
                       &st->tx_stall_timeout_seen, &st->out->tx_stall_timeout_s);
}

// rte_kvargs_process without the call: DPDK announced for 26.11 a new parameter of it (the count of
// matched keys), while the parsed list itself (rte_kvargs: count, pairs) is public and unchanged
// since 22.11. Each pair of `key`, in the order given, to `handler`; a key without a value reaches
// it as NULL (which each of ours refuses with its own message).
int process_key(const rte_kvargs* kv, const char* key, arg_handler_t handler, void* opaque) {
  for (unsigned i = 0; i < kv->count; i++) {
    if (std::strcmp(kv->pairs[i].key, key) != 0) continue;
    const int rc = handler(key, kv->pairs[i].value, opaque);
    if (rc != 0) return rc;
  }
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

  static const char* const keys[] = {kDevargsMac, kDevargsRecoveryTimeout, kDevargsTxStallTimeout,
                                     nullptr};
  char quoted[kQuotedSize];
  quote(args, quoted, sizeof(quoted));
  rte_kvargs* kv = rte_kvargs_parse(args, keys);
  if (kv == nullptr) {
    snprintf(error, error_len, "cannot parse devargs %s: the keys are %s (mac= repeatable)", quoted,
             kDevargsHelp);
    return -EINVAL;
  }
  ParseState st{&out, error, error_len, false, false};
  int rc = process_key(kv, kDevargsMac, on_mac, &st);
  if (rc == 0) rc = process_key(kv, kDevargsRecoveryTimeout, on_recovery_timeout, &st);
  if (rc == 0) rc = process_key(kv, kDevargsTxStallTimeout, on_tx_stall_timeout, &st);
  rte_kvargs_free(kv);
  if (rc != 0) {
    if (error_len && error[0] == '\0')
      snprintf(error, error_len, "invalid devargs %s: expected %s", quoted, kDevargsHelp);
    out = Devargs{};
    return -EINVAL;
  }
  return 0;
}

unsigned warn_ignored_allow_entries(const char* dev_name, const rte_pci_addr& addr,
                                    const rte_devargs* used) {
  unsigned ignored = 0;
  const rte_devargs* da = nullptr;
  while ((da = rte_devargs_next("pci", da)) != nullptr) {
    rte_pci_addr other;
    if (da == used || da->type == RTE_DEVTYPE_BLOCKED ||
        rte_pci_addr_parse(da->name, &other) != 0 || rte_pci_addr_cmp(&other, &addr) != 0)
      continue;
    char ignored_args[kQuotedSize];
    char used_args[kQuotedSize];
    quote(da->args ? da->args : "", ignored_args, sizeof(ignored_args));
    quote(used && used->args ? used->args : "", used_args, sizeof(used_args));
    MANA_INIT_LOG(WARNING,
                  "%s: a second -a for this device is ignored: DPDK applies only the first (%s), "
                  "not %s: give all devargs in one -a (e.g. -a %s,mac=<mac1>,mac=<mac2>)",
                  dev_name, used_args, ignored_args, dev_name);
    ignored++;
  }
  return ignored;
}

}  // namespace mana
