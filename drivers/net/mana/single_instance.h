// SPDX-License-Identifier: BSD-3-Clause
// Two copies of this driver in one process: the installed librte-net-mana23, which the EAL loads
// from its plugin folder, and a build tree's plugin given with -d (doc/guide.md, "Installing").
#pragma once

#include <string>

namespace mana {

// The path of another loaded copy of this driver, or "" when this is the only one. Each copy
// exports a marker symbol; the EAL loads plugins RTLD_LOCAL, so each copy is looked up by handle.
std::string other_loaded_copy();

// This copy's own path.
std::string this_copy_path();

}  // namespace mana
