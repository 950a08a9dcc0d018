// SPDX-License-Identifier: BSD-3-Clause
#include "control/control_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "control/unix_socket.h"

namespace mana::emu {

namespace {

constexpr size_t kMaxLine = 4096;
// The kernel's hardware-stats query period (doc/hardware.md §2.11).
constexpr std::chrono::milliseconds kNetdevStatsPeriod{2000};

struct Client {
  int fd;
  std::string pending;  // bytes after the last complete line
};

// Binds `path`, replacing a socket file left by a process that is gone.
int bind_listener(const std::string& path, std::string* error) {
  struct sockaddr_un addr;
  if (!unix_address(path, &addr, error)) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  auto* sa = reinterpret_cast<struct sockaddr*>(&addr);
  int rc = ::bind(fd, sa, sizeof(addr));
  if (rc != 0 && errno == EADDRINUSE) {
    std::string ignored;
    int probe = connect_unix(path, &ignored);
    if (probe >= 0) {
      ::close(probe);
      ::close(fd);
      *error = "control socket " + path + " is already served by another process";
      return -1;
    }
    if (errno == ECONNREFUSED) {
      ::unlink(path.c_str());
      rc = ::bind(fd, sa, sizeof(addr));
    }
  }
  if (rc != 0 || ::listen(fd, 16) != 0) {
    *error = "cannot listen on " + path + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads what is available; answers every complete line. False when the client is done.
bool serve_client(Client* client, ControlTargets* targets) {
  char chunk[1024];
  ssize_t n = ::read(client->fd, chunk, sizeof(chunk));
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  client->pending.append(chunk, static_cast<size_t>(n));
  size_t nl;
  while ((nl = client->pending.find('\n')) != std::string::npos) {
    std::string reply = targets->handle_line(std::string_view(client->pending).substr(0, nl));
    client->pending.erase(0, nl + 1);
    if (!send_all(client->fd, reply + "\n")) return false;
  }
  if (client->pending.size() > kMaxLine) {
    send_all(client->fd, "error line too long\n");
    return false;
  }
  return true;
}

}  // namespace

ControlServer::ControlServer(std::optional<EmuConfig> config, ControlHooks hooks)
    : targets_(std::move(config), std::move(hooks)) {}

ControlServer::~ControlServer() { stop(); }

bool ControlServer::start(const std::string& socket_path, std::string* error) {
  if (thread_.joinable()) {
    *error = "control server already started";
    return false;
  }
  listen_fd_ = bind_listener(socket_path, error);
  if (listen_fd_ < 0) return false;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    ::close(listen_fd_);
    ::unlink(socket_path.c_str());
    listen_fd_ = -1;
    return false;
  }
  path_ = socket_path;
  // The application's signals (SIGINT for testpmd ...) must reach its own threads, not ours.
  sigset_t all, old;
  sigfillset(&all);
  for (int sync_signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT}) {
    sigdelset(&all, sync_signal);
  }
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] { serve(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return true;
}

void ControlServer::stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  while (::write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(wake_fd_);
  ::close(listen_fd_);
  ::unlink(path_.c_str());
  wake_fd_ = listen_fd_ = -1;
}

void ControlServer::serve() {
  std::vector<Client> clients;
  std::vector<struct pollfd> fds;
  auto next_stats = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_stats) {
      targets_.refresh_netdev_stats();
      next_stats = now + kNetdevStatsPeriod;
    }
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
    // A delayed add's next step (hw netdev-delay-ms) wakes the loop as well.
    const auto next_add = targets_.run_due_adds();
    const auto wake = next_add ? std::min(next_stats, *next_add) : next_stats;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        wake - std::chrono::steady_clock::now());
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0) + 1)) <
        0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    // Clients first: accepting may grow `clients` and shift the indices.
    for (size_t i = clients.size(); i-- > 0;) {
      if (fds[i + 2].revents == 0) continue;
      if (!serve_client(&clients[i], &targets_)) {
        ::close(clients[i].fd);
        clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) clients.push_back({fd, {}});
    }
  }
  for (const Client& c : clients) ::close(c.fd);
}

}  // namespace mana::emu
