// SPDX-License-Identifier: BSD-3-Clause
// DPDK's own net_mana definitions (drivers/net/mana/mana.h of the source tree found at configure
// time, never committed) with the DPDK headers it expects to be included first.
#pragma once

#include <ethdev_driver.h>
#include <rte_atomic.h>
#include <rte_spinlock.h>

extern "C" {
#include <mana.h>
}

#include "dpdk_gdma.h"
