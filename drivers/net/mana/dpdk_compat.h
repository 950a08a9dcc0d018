// SPDX-License-Identifier: BSD-3-Clause
// Where DPDK's driver interface differs between the versions the driver builds against (22.11,
// 24.11, 25.11; doc/guide.md "Other DPDK versions"): each difference once, named by the DPDK
// release and change that made it, so that the rest of the driver, the data path included, is one
// code for all of them. meson.build refuses other versions.
#pragma once

#include <cstddef>
#include <cstdint>

#include <ethdev_driver.h>
#include <rte_mbuf_ptype.h>
#include <rte_version.h>

namespace mana::compat {

// DPDK 24.03 gave eth_dev_ops::dev_supported_ptypes_get an out-parameter for the list's length
// (`size_t *no_of_elements`, which ethdev reads instead of looking for the RTE_PTYPE_UNKNOWN end
// mark 22.11 needed). `List` returns the RTE_PTYPE_UNKNOWN-terminated list for both.
template <const uint32_t* (*List)()>
constexpr eth_dev_supported_ptypes_get_t supported_ptypes_op() {
#if RTE_VERSION >= RTE_VERSION_NUM(24, 3, 0, 0)
  return [](rte_eth_dev* /*dev*/, size_t* count) {
    const uint32_t* list = List();
    size_t n = 0;
    while (list[n] != RTE_PTYPE_UNKNOWN) n++;
    *count = n;
    return list;
  };
#else
  return [](rte_eth_dev* /*dev*/) { return List(); };
#endif
}

}  // namespace mana::compat
