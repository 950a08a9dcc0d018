// SPDX-License-Identifier: BSD-3-Clause
#include "mana_log.h"

RTE_LOG_REGISTER(mana_logtype_init, pmd.net.mana.init, NOTICE);
RTE_LOG_REGISTER(mana_logtype_driver, pmd.net.mana.driver, NOTICE);
