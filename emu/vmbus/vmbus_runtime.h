// SPDX-License-Identifier: BSD-3-Clause
// The synthetic NICs of a process (doc/emulator.md "The synthetic NIC"): which R/dev/uio<n> is
// which NIC, who hosts it (the first process to open it: R/dev/uio<n>.owner flock), the uio maps,
// and the wires a VF with a synthetic NIC shares with it. Part of libmana_emu.so, which holds the
// one of the process (emu/preload); every call except map() holds the process's lock (the verbs
// Runtime's).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/vmbus_tree.h"
#include "device/device_thread.h"
#include "vmbus/shared_port_wire.h"
#include "vmbus/synthetic_nic.h"
#include "wire/wire.h"

namespace mana::emu::vmbus {

class VmbusRuntime {
 public:
  // The NICs of `config` (synthetic_nics()); a hosted NIC is polled by `thread`. Both outlive it.
  VmbusRuntime(const EmuConfig& config, DeviceThread& thread);

  bool has_nic(unsigned index) const { return index < nics_.size(); }
  // After a successful open of R/dev/uio<index> / the close of such an fd (application thread).
  void uio_opened(unsigned index);
  void uio_closed(unsigned index);
  // mmap of a uio fd: map `offset / 4096` of uio<index>.
  void* map(unsigned index, void* addr, size_t len, int prot, int flags, off_t offset);

  // The wires a VF's device model uses: shared with the synthetic NICs of its ports; null when
  // the VF has none (the device builds its own). Under the verbs Runtime's lock.
  std::unique_ptr<WireSet> device_wires(unsigned vf);

  // Control channel: the VF was removed / added back (its synthetic NICs' VF association).
  void vf_presence_changed(unsigned vf, bool present);
  // `netvsc-counters <vf> <port>`: the reply line.
  std::string counters(unsigned vf, unsigned port);

 private:
  struct Nic {
    SyntheticNic info;
    std::unique_ptr<SyntheticNicHost> host;
    unsigned open_fds = 0;
    int owner_fd = -1;  // held for the process's life by the hosting process
    bool tried_owner = false;
  };
  struct VfWires {
    std::unique_ptr<WireSet> real;
    std::array<std::unique_ptr<SharedPortWire>, 8> shared;
  };

  VfWires* wires(unsigned vf);

  const EmuConfig& config_;
  DeviceThread& thread_;
  std::vector<Nic> nics_;
  std::vector<std::unique_ptr<VfWires>> wires_;  // by VF, built on first use
};

}  // namespace mana::emu::vmbus
