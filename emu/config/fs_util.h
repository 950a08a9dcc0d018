// SPDX-License-Identifier: BSD-3-Clause
// Small filesystem helpers for building and removing the emulator's run folder.
#pragma once

#include <string>

namespace mana::emu {

// mkdir -p; true when `path` is a directory afterwards.
bool make_dirs(const std::string& path, std::string* error);
// Creates or truncates `path` with `content`.
bool write_file(const std::string& path, const std::string& content, std::string* error);
// Reads a whole file; false when it cannot be opened.
bool read_file(const std::string& path, std::string* content);
bool make_symlink(const std::string& target, const std::string& link, std::string* error);
// rm -rf without following symlinks; true when `path` no longer exists.
bool remove_tree(const std::string& path, std::string* error);
// Renames `from` to `to`, creating the parent folders of `to`.
bool move_path(const std::string& from, const std::string& to, std::string* error);
bool path_exists(const std::string& path);

}  // namespace mana::emu
