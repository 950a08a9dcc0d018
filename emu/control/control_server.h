// SPDX-License-Identifier: BSD-3-Clause
// The control channel server: a unix stream socket served by one thread of the process that runs
// the VFs' device models (the verbs layer starts it when it creates the first Device).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "control/control_command.h"

namespace mana::emu {

class ControlServer {
 public:
  // `config`: as for ControlTargets (its sysfs tree is updated by netdev/remove/add).
  ControlServer(std::optional<EmuConfig> config, ControlHooks hooks);
  ~ControlServer();  // stop()
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Listens on `socket_path` (a stale socket file that nobody serves is replaced) and starts the
  // thread, which runs with asynchronous signals blocked. False with `error` when the path is
  // served by another process or cannot be bound.
  bool start(const std::string& socket_path, std::string* error);
  // Stops the thread, closes the connections and removes the socket file. Idempotent.
  void stop();

  void add_vf(uint32_t vf, Device* device) { targets_.add_vf(vf, device); }
  void drop_vf(uint32_t vf) { targets_.drop_vf(vf); }
  ControlTargets& targets() { return targets_; }

 private:
  void serve();

  ControlTargets targets_;
  std::string path_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop() wakes the thread's poll
  std::thread thread_;
};

}  // namespace mana::emu
