// SPDX-License-Identifier: BSD-3-Clause
// Compiles the format header on its own so that it stays self-contained.
#include "mana/gdma_format.h"
