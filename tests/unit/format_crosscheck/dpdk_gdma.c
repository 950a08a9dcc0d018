// SPDX-License-Identifier: BSD-3-Clause
/* Compiles DPDK's own drivers/net/mana/gdma.c (WQE writer, doorbells, CQ polling of upstream
 * net_mana) from the source tree found at configure time: DPDK's code is never committed here, only
 * built from .deps. Including the file gives access to what it keeps private. */
#include "gdma.c"

#include "dpdk_gdma.h"

int mana_logtype_driver;
int mana_logtype_init;

const uint32_t dpdk_doorbell_offset_sq = DOORBELL_OFFSET_SQ;
const uint32_t dpdk_doorbell_offset_rq = DOORBELL_OFFSET_RQ;
const uint32_t dpdk_doorbell_offset_cq = DOORBELL_OFFSET_CQ;
const uint32_t dpdk_doorbell_offset_eq = DOORBELL_OFFSET_EQ;

void dpdk_set_packet_format(struct transmit_short_oob_v2* oob, uint32_t value) {
  oob->packet_format = value;
}
