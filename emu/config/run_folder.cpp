// SPDX-License-Identifier: BSD-3-Clause
#include "config/run_folder.h"

#include <sys/un.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "config/fs_util.h"
#include "config/sysfs_tree.h"

namespace mana::emu {

namespace {
constexpr const char* kSocketName = "/control.sock";
}

std::string config_path(const std::string& root) { return root + "/config"; }

bool make_run_folder(EmuConfig* config, std::string* error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp && *tmp ? tmp : "/tmp";
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string templ = base + "/mana-emu.XXXXXX";
  if (!is_plain_value(templ)) {
    *error = "temporary folder " + base + " contains spaces or '#', '=' (set TMPDIR elsewhere)";
    return false;
  }
  if (templ.size() + std::strlen(kSocketName) >= sizeof(sockaddr_un::sun_path)) {
    *error = "temporary folder " + base + " is too long for a unix socket path (set TMPDIR)";
    return false;
  }
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    *error = "cannot create a folder in " + base + ": " + std::strerror(errno);
    return false;
  }
  config->root = buf.data();
  config->control = config->root + kSocketName;
  if (write_run_folder(*config, error)) return true;
  std::string ignored;
  remove_tree(config->root, &ignored);
  return false;
}

bool write_run_folder(const EmuConfig& config, std::string* error) {
  return write_sysfs_tree(config, error) &&
         write_file(config_path(config.root), format_config(config), error);
}

}  // namespace mana::emu
