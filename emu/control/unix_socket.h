// SPDX-License-Identifier: BSD-3-Clause
// Unix stream socket helpers shared by the control server and client.
#pragma once

#include <sys/un.h>

#include <string>

namespace mana::emu {

// Fills a sockaddr_un for `path`; false when the path does not fit sun_path.
bool unix_address(const std::string& path, struct sockaddr_un* addr, std::string* error);
// Connected socket to `path`, or -1 with `error` set (errno kept).
int connect_unix(const std::string& path, std::string* error);
// Sends all of `data` (MSG_NOSIGNAL); false on error.
bool send_all(int fd, const std::string& data);

}  // namespace mana::emu
