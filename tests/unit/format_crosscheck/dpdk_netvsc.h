/* SPDX-License-Identifier: BSD-3-Clause */
/* The layouts and constants of DPDK 22.11's net_netvsc and vmbus headers (hn_nvs.h, rndis.h,
 * ndis.h, rte_vmbus_reg.h) as tables, built in C from those headers (dpdk_netvsc.c) so that the
 * C++ test can compare our definitions with them by name (netvsc_crosscheck_test.cpp). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct netvsc_field { /* "struct.field" or "struct" (then offset 0, size = sizeof) */
  const char* name;
  size_t offset, size;
};
struct netvsc_constant {
  const char* name;
  uint64_t value;
};
extern const struct netvsc_field dpdk_netvsc_fields[];
extern const size_t dpdk_netvsc_field_count;
extern const struct netvsc_constant dpdk_netvsc_constants[];
extern const size_t dpdk_netvsc_constant_count;

#ifdef __cplusplus
}
#endif
