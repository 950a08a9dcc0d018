// SPDX-License-Identifier: BSD-3-Clause
// The ethdev operation tables of a port (primary and secondary processes).
#pragma once

#include <ethdev_driver.h>

namespace mana {

const eth_dev_ops* primary_dev_ops();
const eth_dev_ops* secondary_dev_ops();

}  // namespace mana
