// The ethdev operation tables of a port (primary and secondary processes).
#pragma once

#include <ethdev_driver.h>

#include "priv.h"

namespace mana {

const eth_dev_ops* primary_dev_ops();
const eth_dev_ops* secondary_dev_ops();

// Releases the port's MRs, interrupt handler, PDs and verbs context (probe.cpp).
void close_port_resources(PortPriv& priv);

}  // namespace mana
