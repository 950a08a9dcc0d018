// SPDX-License-Identifier: BSD-3-Clause
// Open-file-description (OFD) byte locks on a shared-memory object: who is attached to a
// cross-process wire (shm, fabric). The kernel drops a dead process's locks, so an attachment left
// behind by a crash is recognised as gone, and a reused pid cannot fool it. Our own locks never
// conflict with us.
#pragma once

#include <sys/types.h>

namespace mana::emu {

bool try_lock_byte(int fd, off_t byte);   // false when another open holds it
bool wait_lock_byte(int fd, off_t byte);  // blocks until taken; false on error
void unlock_byte(int fd, off_t byte);
// Whether another open of the object holds `byte` (when unknown: true, so nothing is reset).
bool byte_held_by_other(int fd, off_t byte);

}  // namespace mana::emu
