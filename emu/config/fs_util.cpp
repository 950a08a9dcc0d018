// SPDX-License-Identifier: BSD-3-Clause
#include "config/fs_util.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mana::emu {

namespace {

bool sys_fail(std::string* error, const std::string& what, const std::string& path) {
  *error = what + " " + path + ": " + std::strerror(errno);
  return false;
}

std::string parent_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path) == 0 ? 0 : -1;
}

}  // namespace

bool make_dirs(const std::string& path, std::string* error) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return true;
    errno = ENOTDIR;
    return sys_fail(error, "cannot create folder", path);
  }
  std::string parent = parent_of(path);
  if (parent != path && !make_dirs(parent, error)) return false;
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return sys_fail(error, "cannot create folder", path);
  }
  return true;
}

bool write_file(const std::string& path, const std::string& content, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return sys_fail(error, "cannot write", path);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return sys_fail(error, "cannot write", path);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return sys_fail(error, "cannot write", path);
  return true;
}

bool read_file(const std::string& path, std::string* content) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *content = text.str();
  return true;
}

bool make_symlink(const std::string& target, const std::string& link, std::string* error) {
  if (::symlink(target.c_str(), link.c_str()) != 0) {
    return sys_fail(error, "cannot create symlink", link);
  }
  return true;
}

bool remove_tree(const std::string& path, std::string* error) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return true;
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    return sys_fail(error, "cannot remove", path);
  }
  return true;
}

bool move_path(const std::string& from, const std::string& to, std::string* error) {
  if (!make_dirs(parent_of(to), error)) return false;
  if (::rename(from.c_str(), to.c_str()) != 0) return sys_fail(error, "cannot move", from);
  return true;
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace mana::emu
