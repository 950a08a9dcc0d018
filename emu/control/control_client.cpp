// SPDX-License-Identifier: BSD-3-Clause
#include "control/control_client.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "control/unix_socket.h"

namespace mana::emu {

bool send_control_command(const std::string& socket_path, const std::string& command,
                          int timeout_ms, std::string* reply, std::string* error) {
  if (command.find('\n') != std::string::npos) {
    *error = "a command is one line";
    return false;
  }
  int fd = connect_unix(socket_path, error);
  if (fd < 0) return false;
  bool ok = send_all(fd, command + "\n");
  if (!ok) *error = std::string("cannot send: ") + std::strerror(errno);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string buf;
  while (ok && buf.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    struct pollfd p = {fd, POLLIN, 0};
    int r = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      *error = "no reply from " + socket_path + " within " + std::to_string(timeout_ms) + " ms";
      ok = false;
      break;
    }
    char chunk[4096];
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "connection closed before a reply";
      ok = false;
      break;
    }
    buf.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  if (ok) *reply = buf.substr(0, buf.find('\n'));
  return ok;
}

}  // namespace mana::emu
