// SPDX-License-Identifier: BSD-3-Clause
#include "control/unix_socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mana::emu {

bool unix_address(const std::string& path, struct sockaddr_un* addr, std::string* error) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr->sun_path)) {
    *error = "control socket path '" + path + "' is empty or longer than " +
             std::to_string(sizeof(addr->sun_path) - 1) + " characters";
    return false;
  }
  std::memcpy(addr->sun_path, path.c_str(), path.size() + 1);
  return true;
}

int connect_unix(const std::string& path, std::string* error) {
  struct sockaddr_un addr;
  if (!unix_address(path, &addr, error)) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  if (::connect(fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) != 0) {
    int saved = errno;
    *error = "cannot connect to " + path + ": " + std::strerror(saved);
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace mana::emu
