// SPDX-License-Identifier: BSD-3-Clause
// The process's synthetic NICs (emu/vmbus) beside its verbs Runtime (emu/verbs): the one place
// that knows both. The uio hooks reach the NICs here; the Runtime reaches them through the VfHooks
// that this file gives it when the library loads.
#pragma once

#include "vmbus/vmbus_runtime.h"

namespace mana::emu::preload {

// Null when the emulator is passive or the run has no synthetic NIC bound to uio_hv_generic.
// Built on first use from the verbs Runtime's config and device thread; never destroyed.
vmbus::VmbusRuntime* vmbus_runtime();

}  // namespace mana::emu::preload
