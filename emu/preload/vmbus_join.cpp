// SPDX-License-Identifier: BSD-3-Clause
#include "preload/vmbus_join.h"

#include "preload/uevent_inject.h"
#include "verbs/runtime.h"

namespace mana::emu::preload {

vmbus::VmbusRuntime* vmbus_runtime() {
  static vmbus::VmbusRuntime* instance = []() -> vmbus::VmbusRuntime* {
    verbs::Runtime* runtime = verbs::Runtime::get();
    if (runtime == nullptr || synthetic_nics(runtime->config()).empty()) return nullptr;
    // Lives as long as the process (the device thread uses it).
    return new vmbus::VmbusRuntime(runtime->config(), runtime->thread());
  }();
  return instance;
}

namespace {

// The VfHooks of the synthetic NICs, or null without them (asked at each use, as before the NICs
// lived apart from the Runtime).
const verbs::VfHooks* vf_hooks() {
  static const verbs::VfHooks* hooks = []() -> const verbs::VfHooks* {
    vmbus::VmbusRuntime* nics = vmbus_runtime();
    if (nics == nullptr) return nullptr;
    auto* h = new verbs::VfHooks();
    h->device_wires = [nics](unsigned vf) { return nics->device_wires(vf); };
    h->presence_changed = [nics](unsigned vf, bool present) {
      nics->vf_presence_changed(vf, present);
    };
    h->pci_added = [](const std::string& pci) { inject_pci_add_uevent(pci); };
    h->netvsc_counters = [nics](unsigned vf, unsigned port) { return nics->counters(vf, port); };
    return h;
  }();
  return hooks;
}

// Run by the loader when it loads the library, before the application's main: the Runtime asks
// for its VfHooks only when a context of a VF is opened.
__attribute__((constructor)) void join_vmbus() { verbs::Runtime::set_vf_hooks(&vf_hooks); }

}  // namespace

}  // namespace mana::emu::preload
