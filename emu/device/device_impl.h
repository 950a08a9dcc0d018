// SPDX-License-Identifier: BSD-3-Clause
// The Device implementation: control objects (device_control.cpp), doorbells
// (device_doorbells.cpp), TX (device_tx.cpp) and RX (device_rx.cpp). One lock guards all state:
// control calls take it per call and `poll` takes it once per pass, so the per-packet path itself
// takes no lock.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "device/device.h"
#include "device/cq_producer.h"
#include "device/doorbell_queue.h"
#include "device/objects.h"
#include "device/offloads.h"
#include "device/wqe_reader.h"

namespace mana::emu {

// The 64-bit doorbell slots of a context's page, in Context::last_sampled order.
inline constexpr uint32_t kDoorbellSlots[3] = {hw::kSqDoorbellOffset, hw::kRqDoorbellOffset,
                                               hw::kCqDoorbellOffset};
// RX staging: any frame a wire can carry (larger ones are counted as MTU drops).
inline constexpr uint32_t kRxStagingBytes = 65536;

// The vPort MTU the data path enforces (set on the control path, Port::mtu).
inline uint32_t port_mtu(Port& port) {
  return std::atomic_ref<uint32_t>(port.mtu).load(std::memory_order_relaxed);
}
// TX/RX budgets per queue or port and poll pass, so one busy queue cannot starve the others.
inline constexpr unsigned kTxBudget = 256;
// Not a CQE: the wire refused the frame for now; the WQE stays pending for a later pass.
inline constexpr uint32_t kTxRetryLater = 0xFFFFFFFF;
inline constexpr unsigned kRxBudget = 256;

class DeviceImpl final : public Device {
 public:
  DeviceImpl(const VfConfig& config, std::unique_ptr<WireSet> wires, uint32_t seed);
  ~DeviceImpl() override;

  const VfConfig& config() const override { return config_; }

  int open_context(volatile uint64_t* page, uint32_t* context_id) override;
  int close_context(uint32_t context_id) override;
  int alloc_pd(uint32_t context_id, uint32_t* pd_id) override;
  int dealloc_pd(uint32_t pd_id) override;
  int reg_mr(uint32_t pd_id, uint64_t addr, uint64_t length, uint32_t access,
             uint32_t* lkey) override;
  int dereg_mr(uint32_t lkey) override;
  int create_cq(uint32_t context_id, void* buf, uint32_t count, CqEventFd event_fd,
                uint32_t* cq_handle) override;
  int destroy_cq(uint32_t cq_handle) override;
  int create_wq(uint32_t context_id, uint32_t pd_id, void* buf, uint32_t size_bytes,
                uint32_t max_wr, uint32_t max_sge, uint32_t cq_handle,
                uint32_t* wq_handle) override;
  int destroy_wq(uint32_t wq_handle) override;
  int create_raw_qp(uint32_t context_id, uint32_t pd_id, uint32_t port, void* sq_buf,
                    uint32_t sq_size_bytes, uint32_t max_send_wr, uint32_t max_send_sge,
                    uint32_t cq_handle, SqBinding* out, uint32_t* qp_handle) override;
  int create_rss_qp(uint32_t context_id, uint32_t pd_id, uint32_t port, const uint32_t* wq_handles,
                    unsigned log_size, uint8_t hash_function, const uint8_t* key, uint32_t key_len,
                    RqBinding* out, uint32_t* qp_handle) override;
  int destroy_qp(uint32_t qp_handle) override;

  void ring(uint32_t context_id, uint32_t offset, uint64_t value) override;
  void set_poll_doorbells(bool on) override;
  void set_shared_doorbell_slots(bool on) override;
  void hold_doorbell_page(uint32_t context_id) override;
  void release_doorbell_page(uint32_t context_id) override;
  void set_disassociate_destroy(bool frees) override;
  bool context_disassociated(uint32_t context_id) override;
  unsigned poll() override;

  void set_netdev_up(uint32_t port, bool up) override;
  bool netdev_up(uint32_t port) const override;
  void inject(const Fault& fault) override;
  void set_present(bool present) override;
  bool present() const override;

  QueueCounters sq_counters(uint32_t sq_id) const override;
  QueueCounters rq_counters(uint32_t rq_id) const override;
  PortCounters port_counters(uint32_t port) const override;
  LiveObjects live_objects() const override;
  uint64_t bad_doorbells() const override;

 private:
  struct Qp {
    std::unique_ptr<Sq> sq;      // raw QP
    std::unique_ptr<RssQp> rss;  // RSS QP
    bool released = false;       // its hardware went with a hot removal
  };

  // ---- control helpers (device_control.cpp), called with the lock held
  Context* find_context(uint32_t id);
  // A destroy of an object of a disassociated context: the object goes, the answer is EIO.
  bool disassociated(uint32_t context_id);
  // Hot removal: every QP lets go of its vPort, steering and queue ids; every context is
  // disassociated (its objects stay until destroyed, for `live`).
  void disassociate_all();
  Pd* find_pd(uint32_t id, uint32_t context_id);
  Cq* find_cq(uint32_t handle, uint32_t context_id);
  Port* find_port(uint32_t ib_port);
  bool poll_mode_allows(const Context& ctx, uint32_t new_sqs, uint32_t new_rqs) const;
  int acquire_vport(Port& port, uint32_t pd_id);
  void follow_netdev_mtu(Port& port);
  // A raw QP of `pd_id` on `port` has configured its vPort.
  bool vport_configured_for(const Port& port, uint32_t pd_id) const;
  void release_vport(Port& port);
  bool bind_queue(QueueBase& q);
  void unbind_queue(QueueBase& q);
  void destroy_raw_qp(Sq& sq);
  void destroy_rss_qp(RssQp& rss);

  // ---- doorbells (device_doorbells.cpp)
  unsigned drain_doorbells();
  void note_rung(const DoorbellStore& s);
  unsigned sample_doorbell_pages();       // until a round sees no change
  unsigned sample_doorbell_pages_once();  // one read of every context's slots
  // Applies every doorbell stored before a destroy call, so that none outlives its queue.
  void settle_doorbells();
  void apply_doorbell(uint32_t context_id, uint32_t offset, uint64_t value);
  WorkQueue* doorbell_queue(uint32_t context_id, uint64_t value, QueueKind kind);

  // ---- TX (device_tx.cpp)
  unsigned process_sq(Sq& sq, unsigned budget);
  // Before its QP goes away: sends the WQEs the driver already posted (see device_tx.cpp).
  void send_posted_wqes(Sq& sq);
  CqeStatus check_and_send(Sq& sq, const WqeView& w);
  // A TSO WQE (client_data_unit != 0) whose OOB and SGL passed the common checks (device_tso.cpp).
  CqeStatus send_tso(Sq& sq, const WqeView& w, const hw::TxOob& oob, bool long_oob,
                     const hw::Sge* sges);
  void complete_tx(Sq& sq, const WqeView& w, CqeStatus status);

  // ---- RX (device_rx.cpp)
  unsigned receive_port(Port& port, unsigned budget);
  // The next posted RX WQE, read and checked but not consumed.
  struct RxBuffer {
    WqeView wqe;
    hw::Sge sges[hw::kMaxRxSge];
    uint64_t capacity = 0;
    CqeStatus status{hw::kCqeRxOkay};  // an error CQE when the WQE or its buffers are invalid
    bool corrupt = false;              // the header overruns the announced work
  };
  bool claim_rx_wqe(Port& port, Rq& rq, RxBuffer* out);  // false: no WQE posted
  // Consumes the WQE (`claimed`, or the next one) for `frame` and completes it.
  // `truncate`: complete it as CQE_RX_TRUNCATED whatever the buffer (hw rx-oversize=truncate).
  void deliver(Port& port, Rq& rq, RxBuffer* claimed, const uint8_t* frame, uint32_t len,
               uint32_t dw1, uint32_t hash, bool truncate);
  // deliver's two halves: claiming the next WQE, and completing the claimed one.
  void claim_and_complete(Port& port, Rq& rq, const uint8_t* frame, uint32_t len, uint32_t dw1,
                          uint32_t hash, bool truncate);
  void complete_rx(Port& port, Rq& rq, RxBuffer* b, const uint8_t* frame, uint32_t len,
                   uint32_t dw1, uint32_t hash, bool truncate);
  // The CQE's hash-type field for the one NDIS bit of the hash computed (hw hash-type).
  uint32_t hash_type_field(uint32_t one_bit) const;
  void post_rx_error(Rq& rq, const WqeView& w, CqeStatus status);
  // Every RX CQE goes through here (hw zero-length-cqe): the zero-length CQE when one is due
  // before the completion of the WQE at `wqe_offset` (bytes), then the completion, `fill` writing
  // its dw0..dw14 in place (cq_post_in_place); or the same for a CQE built by the caller.
  template <typename Fill>
  void post_rx_cqe(Rq& rq, uint32_t wqe_offset, Fill&& fill);
  void post_rx_cqe(Rq& rq, const hw::Cqe& cqe);
  void zero_length_cqe_if_due(Rq& rq, uint32_t wqe_offset);
  void flush_coalesced(Rq& rq);
  void flush_all_coalesced();
  // Before the vPort gets RX steering: drops what reached it while it had none.
  void drop_unsteered_frames(Port& port);
  // hw rx-steering-on-destroy=keep (device_stale_steering.cpp, doc/hardware.md §9.22).
  void keep_stale_steering(Port& port, RssQp& rss);
  void end_stale_steering(Port& port);
  void route_stale_frame(Port& port, const uint8_t* frame, uint32_t len);
  bool bind_cq_to_stale_id(Port& port, Cq& cq);

  const VfConfig config_;
  std::unique_ptr<WireSet> wires_;
  mutable std::mutex lock_;
  std::atomic<bool> present_{true};
  std::atomic<bool> poll_doorbells_{false};
  bool shared_doorbell_slots_ = false;  // under lock_
  bool disassociate_frees_ = true;
  DoorbellQueue doorbells_;
  uint64_t bad_doorbells_ = 0;
  bool warned_bad_doorbell_ = false;

  uint32_t next_handle_;
  std::map<uint32_t, std::unique_ptr<Context>> contexts_;
  std::map<uint32_t, std::unique_ptr<Pd>> pds_;
  std::map<uint32_t, std::unique_ptr<Mr>> mrs_;  // by lkey
  std::map<uint32_t, std::unique_ptr<Cq>> cqs_;
  std::map<uint32_t, std::unique_ptr<Rq>> wqs_;
  std::map<uint32_t, Qp> qps_;
  MrTable mr_table_;
  MrCache mr_cache_;  // over mr_table_: reset by dereg_mr
  TaggedTable<QueueBase> queue_ids_;
  std::vector<Port> ports_;
  std::vector<Sq*> sqs_;                // every live SQ, for the TX pass
  std::vector<Context*> context_list_;  // for doorbell-page sampling

  // Staging buffers for one frame (TX gather, RX from the wire); room for a VLAN tag in front.
  std::vector<uint8_t> tx_frame_;
  std::vector<uint8_t> tso_packet_;  // a TSO WQE's gathered packet (sized at the first one)
  std::vector<uint8_t> rx_frame_;
};

}  // namespace mana::emu
