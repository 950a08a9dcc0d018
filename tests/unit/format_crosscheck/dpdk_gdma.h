// SPDX-License-Identifier: BSD-3-Clause
/* What the format cross-check needs from DPDK's gdma.c beyond mana.h: the doorbell-page offsets,
 * which gdma.c keeps in a file-local enum, and a setter for the one enum-typed bit-field (C++ may
 * not store values outside an enum's range; C may). Implemented by dpdk_gdma.c. */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct transmit_short_oob_v2;

extern const uint32_t dpdk_doorbell_offset_sq;
extern const uint32_t dpdk_doorbell_offset_rq;
extern const uint32_t dpdk_doorbell_offset_cq;
extern const uint32_t dpdk_doorbell_offset_eq;

void dpdk_set_packet_format(struct transmit_short_oob_v2* oob, uint32_t value);

/* Defined by DPDK's mana.c, which is not built here; the test points it at a log type it reads. */
extern int mana_logtype_driver;

#ifdef __cplusplus
}
#endif
