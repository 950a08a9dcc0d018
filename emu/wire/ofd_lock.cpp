// SPDX-License-Identifier: BSD-3-Clause
#include "wire/ofd_lock.h"

#include <fcntl.h>

#include <cerrno>

namespace mana::emu {
namespace {

bool ofd_lock(int fd, off_t byte, int cmd, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = byte;
  fl.l_len = 1;
  int rc;
  do rc = fcntl(fd, cmd, &fl);
  while (rc < 0 && errno == EINTR);
  return rc == 0;
}

}  // namespace

bool try_lock_byte(int fd, off_t byte) { return ofd_lock(fd, byte, F_OFD_SETLK, F_WRLCK); }
bool wait_lock_byte(int fd, off_t byte) { return ofd_lock(fd, byte, F_OFD_SETLKW, F_WRLCK); }
void unlock_byte(int fd, off_t byte) { ofd_lock(fd, byte, F_OFD_SETLK, F_UNLCK); }

bool byte_held_by_other(int fd, off_t byte) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = byte;
  fl.l_len = 1;
  if (fcntl(fd, F_OFD_GETLK, &fl) < 0) return true;
  return fl.l_type != F_UNLCK;
}

}  // namespace mana::emu
