// SPDX-License-Identifier: BSD-3-Clause
// Walking the attributes of an rtnetlink link message (RTM_NEWLINK / RTM_GETLINK) in a const
// buffer. The kernel's RTA_* / IFLA_RTA / NLMSG_DATA macros cast const away; these helpers do the
// same arithmetic with const pointers. Shared by the driver's max-MTU query and the emulator's
// answer to it (doc/hardware.md §2.9).
#pragma once

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstddef>
#include <cstdint>

namespace mana {

// The payload of a netlink message, after its header.
inline const uint8_t* nl_payload(const nlmsghdr* h) {
  return reinterpret_cast<const uint8_t*>(h) + NLMSG_HDRLEN;
}

// Calls fn(type, data, len) for each well-formed attribute after a link message's ifinfomsg;
// stops at the first malformed one. The caller has checked that nlmsg_len covers the ifinfomsg.
template <class Fn>
void for_each_link_attr(const nlmsghdr* h, Fn fn) {
  const size_t start = NLMSG_SPACE(sizeof(ifinfomsg));
  if (h->nlmsg_len < start) return;
  const uint8_t* at = reinterpret_cast<const uint8_t*>(h) + start;
  size_t left = h->nlmsg_len - start;
  while (left >= sizeof(rtattr)) {
    const auto* a = reinterpret_cast<const rtattr*>(at);
    if (a->rta_len < sizeof(rtattr) || a->rta_len > left) return;
    fn(a->rta_type, at + RTA_LENGTH(0), static_cast<size_t>(a->rta_len) - RTA_LENGTH(0));
    const size_t step = RTA_ALIGN(a->rta_len);
    if (step >= left) return;
    at += step;
    left -= step;
  }
}

}  // namespace mana
