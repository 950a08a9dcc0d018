// SPDX-License-Identifier: BSD-3-Clause
// Runs a program with extra environment variables, captures stdout and stderr, and waits for it
// with a bounded timeout (the test fails instead of hanging).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace mana::emu::testing {

struct ProcessResult {
  int status = -1;  // exit code, 128+N for signal N, -1 on timeout
  std::string out, err;
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

class ChildProcess {
 public:
  // Starts `argv`; `env` entries are set (value "\x01unset" removes a variable).
  ChildProcess(const std::vector<std::string>& argv, const EnvList& env);
  ~ChildProcess();
  pid_t pid() const { return pid_; }
  // Reads stdout until it contains `text` or `timeout_ms` passes.
  bool wait_for_output(const std::string& text, int timeout_ms);
  // Collects the rest of the output and the exit status.
  ProcessResult finish(int timeout_ms);

 private:
  bool pump(int timeout_ms);  // one poll round; false on EOF of both pipes
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  ProcessResult result_;
};

ProcessResult run_process(const std::vector<std::string>& argv, const EnvList& env = {},
                          int timeout_ms = 20000);

constexpr const char* kUnset = "\x01unset";

}  // namespace mana::emu::testing
