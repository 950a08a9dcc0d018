// SPDX-License-Identifier: BSD-3-Clause
#include "process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

namespace mana::emu::testing {

namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const EnvList& env) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (const auto& [name, value] : env) {
      if (value == kUnset) {
        ::unsetenv(name.c_str());
      } else {
        ::setenv(name.c_str(), value.c_str(), 1);
      }
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(126);
  }
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

bool ChildProcess::pump(int timeout_ms) {
  struct pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (out_fd_ < 0 && err_fd_ < 0) return false;
  int r = ::poll(fds, 2, timeout_ms);
  if (r <= 0) return r < 0 && errno == EINTR;
  std::string* sinks[2] = {&result_.out, &result_.err};
  int* fdp[2] = {&out_fd_, &err_fd_};
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || fds[i].revents == 0) continue;
    char buf[4096];
    ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
    if (n > 0) {
      sinks[i]->append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      ::close(*fdp[i]);
      *fdp[i] = -1;
    }
  }
  return true;
}

bool ChildProcess::wait_for_output(const std::string& text, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (result_.out.find(text) == std::string::npos) {
    if (ms_left(deadline) == 0 || !pump(ms_left(deadline))) return false;
  }
  return true;
}

ProcessResult ChildProcess::finish(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while ((out_fd_ >= 0 || err_fd_ >= 0) && ms_left(deadline) > 0) pump(ms_left(deadline));
  // Pipes closed (or deadline): wait for the exit through a pidfd, within the same deadline.
  if (pid_ <= 0) return result_;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    struct pollfd p = {pidfd, POLLIN, 0};
    while (::poll(&p, 1, ms_left(deadline)) < 0 && errno == EINTR) {
    }
    ::close(pidfd);
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    result_.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
  }  // else status stays -1 (timeout) and the destructor kills the process
  return result_;
}

ProcessResult run_process(const std::vector<std::string>& argv, const EnvList& env,
                          int timeout_ms) {
  ChildProcess child(argv, env);
  return child.finish(timeout_ms);
}

}  // namespace mana::emu::testing
