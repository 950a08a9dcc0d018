// SPDX-License-Identifier: BSD-3-Clause
// A fresh temporary folder per test, removed afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "config/fs_util.h"

namespace mana::emu::testing {

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/emu-tool-test.XXXXXX";
    const char* made = ::mkdtemp(templ);
    EXPECT_NE(made, nullptr);
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::string error;
    if (!path_.empty()) {
      EXPECT_TRUE(remove_tree(path_, &error)) << error;
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace mana::emu::testing
