// SPDX-License-Identifier: BSD-3-Clause
#include "kept_queues.h"

namespace mana {

void free_kept_queues(PortPriv& priv) {
  for (RxQueue*& q : priv.kept_rxq) {
    rte_free(q);
    q = nullptr;
  }
  for (TxQueue*& q : priv.kept_txq) {
    rte_free(q);
    q = nullptr;
  }
}

}  // namespace mana
