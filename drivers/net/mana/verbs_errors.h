// SPDX-License-Identifier: BSD-3-Clause
// One place for the messages of queue-creation failures that users can fix.
#pragma once

#include "priv.h"

namespace mana {

// Logs why creating `what` (e.g. "TX queue 0 QP") failed with errno `err` and returns -err.
int log_queue_create_error(const PortPriv& priv, const char* what, int err);

}  // namespace mana
