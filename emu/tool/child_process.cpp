// SPDX-License-Identifier: BSD-3-Clause
#include "tool/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace mana::emu {

namespace {

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  const pid_t child = g_child;
  if (child <= 0) return;
  const int saved = errno;
  if (::kill(-child, sig) != 0) ::kill(child, sig);  // the child may have left its group
  errno = saved;
}

// True when mana-emu runs in the terminal's foreground: then the child's group takes the terminal.
bool owns_terminal() { return ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp(); }

// tcsetpgrp from a background group raises SIGTTOU; ignore it for the call.
void give_terminal(pid_t pgrp) {
  struct sigaction ignore = {}, old = {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGTTOU, &ignore, &old);
  ::tcsetpgrp(STDIN_FILENO, pgrp);
  ::sigaction(SIGTTOU, &old, nullptr);
}

[[noreturn]] void exec_child(const std::vector<std::string>& argv, pid_t parent, bool terminal,
                             const sigset_t& old_mask) {
  ::setpgid(0, 0);
  if (terminal) give_terminal(::getpid());
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) _exit(128 + SIGTERM);  // mana-emu died before the prctl
  for (int sig : kForwardedSignals) std::signal(sig, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  const int err = errno;
  std::fprintf(stderr, "mana-emu: cannot run %s: %s\n", args[0], std::strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

// Waits for the child; with the terminal, follows it through Ctrl-Z stops like a shell would.
int wait_child(pid_t child, bool terminal) {
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(child, &status, terminal ? WUNTRACED : 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      std::perror("mana-emu: waitpid");
      return 1;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    if (WIFSTOPPED(status)) {
      give_terminal(::getpgrp());
      ::raise(SIGSTOP);  // until the shell continues us (fg/bg)
      if (owns_terminal()) give_terminal(child);
      ::kill(-child, SIGCONT);
    }
  }
}

}  // namespace

int run_child(const std::vector<std::string>& argv) {
  const bool terminal = owns_terminal();
  // Signals arriving before the child exists wait (blocked) and are forwarded once it does.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwardedSignals) sigaddset(&forwarded, sig);
  ::sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  struct sigaction action = {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : kForwardedSignals) ::sigaction(sig, &action, nullptr);

  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("mana-emu: fork");
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return 1;
  }
  if (child == 0) exec_child(argv, parent, terminal, old_mask);
  ::setpgid(child, child);  // also here: no window in which a forwarded signal misses the group
  g_child = child;
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  const int status = wait_child(child, terminal);
  g_child = 0;
  if (terminal) give_terminal(::getpgrp());
  for (int sig : kForwardedSignals) std::signal(sig, SIG_DFL);
  return status;
}

}  // namespace mana::emu
