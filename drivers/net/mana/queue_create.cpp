// SPDX-License-Identifier: BSD-3-Clause
#include "queue_create.h"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <infiniband/manadv.h>
#include <infiniband/verbs.h>
#include <rte_cycles.h>
#include <rte_interrupts.h>
#include <rte_malloc.h>

#include "dpdk_compat.h"
#include "mana_log.h"
#include "port_owner.h"
#include "recovery_state.h"

namespace mana {

namespace {

void* alloc_queue_memory(size_t size, void* data) {
  const int socket = static_cast<int>(reinterpret_cast<intptr_t>(data));
  void* p = rte_zmalloc_socket("mana_queue", size, compat::page_size(), socket);
  if (p == nullptr)
    MANA_DRV_LOG(ERR,
                 "no DPDK memory for a %zu-byte queue ring on socket %d: reserve more hugepages",
                 size, socket);
  return p;
}

void free_queue_memory(void* ptr, void* /*data*/) { rte_free(ptr); }

constexpr uint64_t kRemovalEventWaitMs = 2000;

// Whether a create failed because the VF is being removed. uverbs answers EIO on a context a
// removal disassociated and queues IBV_EVENT_DEVICE_FATAL on its async fd in the same step
// (doc/hardware.md §2.7), but the EAL interrupt thread reads that event on its own time: the
// control thread can see the EIO first. So on EIO this waits, bounded, for the recovery to have
// seen the event. Never on the interrupt thread, which is the one that would read it.
bool removal_under_way(const PortPriv& priv, int err) {
  if (recovery_state(priv) != Recovery::kNone) return true;
  if (err != EIO || rte_thread_is_intr()) return false;
  const uint64_t deadline =
      rte_get_timer_cycles() + kRemovalEventWaitMs * rte_get_timer_hz() / 1000;
  while (rte_get_timer_cycles() < deadline) {
    rte_delay_us_sleep(1000);
    if (recovery_state(priv) != Recovery::kNone) return true;
  }
  MANA_DRV_LOG(WARNING, "port %u (%s): EIO from the device, but no removal event within %u ms",
               priv.port_id, priv.ifname, static_cast<unsigned>(kRemovalEventWaitMs));
  return false;
}

}  // namespace

int use_dpdk_memory_for_queues(ibv_context* ctx, int socket) {
  manadv_ctx_allocators allocators{};  // libmana copies it
  allocators.alloc = alloc_queue_memory;
  allocators.free = free_queue_memory;
  allocators.data = reinterpret_cast<void*>(static_cast<intptr_t>(socket));
  // Before every CQ: a CQ created without them is refused (rdma-core 44..52) or becomes an RDMA
  // CQ that raw and RSS QPs refuse (53 on; doc/hardware.md §9.21).
  const int rc = manadv_set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &allocators);
  if (rc != 0) {
    MANA_DRV_LOG(ERR,
                 "manadv_set_context_attr(BUF_ALLOCATORS) failed: %s: this rdma-core's libmana "
                 "cannot place queues in DPDK memory; install rdma-core >= 44 (Debian/Ubuntu: "
                 "ibverbs-providers, RHEL/Azure Linux: libibverbs) and check with mana-doctor",
                 strerror(rc));
    return -rc;
  }
  return 0;
}

bool cq_id_assigned(const PortPriv& priv, const char* kind, uint16_t queue, uint32_t cq_id) {
  // rdma-core >= 62 reports UINT32_MAX until a QP assigns the id (doc/hardware.md §9.21); after
  // the QP, an unassigned id would send every doorbell of the queue to no CQ.
  if (cq_id != kCqIdUnassigned) return true;
  MANA_DRV_LOG(ERR,
               "port %u %s queue %u: libmana reports no CQ id after the queue was created: "
               "rdma-core's libmana and the kernel's mana_ib disagree; update both",
               priv.port_id, kind, queue);
  return false;
}

namespace {

// 0 when a CQ of `cqe` entries can be created (and is destroyed again), else the errno.
int try_create_cq(ibv_context* ctx, uint32_t cqe) {
  ibv_cq* cq = ibv_create_cq(ctx, static_cast<int>(cqe), nullptr, nullptr, 0);
  if (cq == nullptr) return errno ? errno : EIO;
  ibv_destroy_cq(cq);
  return 0;
}

}  // namespace

uint32_t probe_provider_max_wr(const PortPriv& priv) {
  DeviceCaps kernel = priv.caps;
  kernel.provider_max_wr = 0;
  const uint32_t wanted = max_desc_of(kernel);
  if (wanted <= kLegacyLibmanaMaxWr) return 0;  // nothing to learn
  // libmana 44 creates CQs only with the application's buffer allocators set.
  if (use_dpdk_memory_for_queues(priv.ctx, priv.socket) != 0) return 0;
  const int err = try_create_cq(priv.ctx, wanted);
  if (err == 0) return 0;
  if (err == EINVAL && try_create_cq(priv.ctx, kLegacyLibmanaMaxWr) == 0) {
    MANA_INIT_LOG(NOTICE,
                  "%s: at most %u descriptors per queue: the kernel allows %u but this rdma-core's "
                  "libmana (< v49) refuses more than %u",
                  priv.name, kLegacyLibmanaMaxWr, wanted, kLegacyLibmanaMaxWr);
    return kLegacyLibmanaMaxWr;
  }
  MANA_INIT_LOG(WARNING, "%s: cannot probe the provider's queue-size limit (CQ of %u: %s)",
                priv.name, wanted, strerror(err));
  return 0;
}

void log_ring_size(const PortPriv& priv, const char* kind, uint16_t idx, uint32_t n,
                   uint32_t nb_desc) {
  if (n < nb_desc)
    MANA_DRV_LOG(NOTICE,
                 "port %u %s queue %u: %u descriptors for %u requested: at most %u (%s, a "
                 "power of two)",
                 priv.port_id, kind, idx, n, nb_desc, max_desc_of(priv.caps),
                 desc_limit_source(priv.caps));
  else if (n != nb_desc)
    MANA_DRV_LOG(INFO, "port %u %s queue %u: %u descriptors (a power of two) for %u requested",
                 priv.port_id, kind, idx, n, nb_desc);
}

const char* desc_limit_source(const DeviceCaps& caps) {
  if (caps.provider_max_wr != 0 && caps.provider_max_wr < RTE_MIN(caps.max_qp_wr, caps.max_cqe))
    return "rdma-core's libmana (< v49) limit";
  return "the kernel's max_qp_wr/max_cqe";
}

int log_queue_create_error(const PortPriv& priv, const char* what, int err) {
  if (err == 0) err = EIO;
  if (removal_under_way(priv, err)) {
    char note[kOwnerNoteLen];
    MANA_DRV_LOG(ERR, "port %u (%s): cannot create %s: the VF is removed (%s)%s", priv.port_id,
                 priv.ifname, what, strerror(err),
                 owner_removal_note(priv.port_id, note, sizeof(note)));
    return -err;
  }
  // The vPort is taken: ENODEV from 6.x kernels, EBUSY from newer ones (doc/hardware.md §5.3).
  if (err == ENODEV || err == EBUSY)
    MANA_DRV_LOG(ERR,
                 "port %u: the kernel interface %s is up and owns the vPort: run 'ip link set %s "
                 "down'",
                 priv.port_id, priv.ifname, priv.ifname);
  else if (err == ENOMEM)
    MANA_DRV_LOG(ERR, "port %u (%s): cannot create %s: out of memory: reserve more hugepages",
                 priv.port_id, priv.ifname, what);
  else
    MANA_DRV_LOG(ERR, "port %u (%s): cannot create %s: %s", priv.port_id, priv.ifname, what,
                 strerror(err));
  return -err;
}

}  // namespace mana
