// SPDX-License-Identifier: BSD-3-Clause
// For the mmap interposer (mmap_hook.cpp): whether an fd is an emulated /dev/uio<n>.
#pragma once

namespace mana::emu::preload {

// True with `index` = n when `fd` was opened as /dev/uio<n> of a synthetic NIC.
bool is_uio_fd(int fd, unsigned* index);

}  // namespace mana::emu::preload
