// SPDX-License-Identifier: BSD-3-Clause
// Frames through the emulated device over a loop wire: WQEs written into the rings manadv_init_obj
// returned, doorbells stored into the context's doorbell page (trapped or polled), CQEs read back
// with the owner-bit protocol; completion-channel events; the cmd_fd mapped a second time (as a
// DPDK secondary does) rings doorbells too.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "mana/gdma_format.h"
#include "scenario.h"
#include "secondary.h"
#include "verbs_driver.h"

namespace mana::emu::test {
namespace {

namespace hw = mana::hw;

constexpr uint32_t kBufBytes = 2048;
constexpr int kTimeoutMs = 5000;

struct LoopPort {
  ibv_device** list = ibv_get_device_list(nullptr);
  PortObjects port;
  TxQueue txq;
  RxQueue rxq;
  PacketMemory mem;
  bool ok = false;
  explicit LoopPort(bool channel = false) {
    ok = port.open(find_device(list, "7870:00:00.0"), 1) && txq.create(port, 64) == 0 &&
         rxq.create(port, 64, channel) == 0 && mem.reg(port.pd, 64 * kBufBytes * 2);
  }
  ~LoopPort() {
    txq.destroy();
    rxq.destroy();
    mem.dereg();
    port.close();
    ibv_free_device_list(list);
  }
  uint8_t* rx_buf(unsigned i) { return mem.base + i * kBufBytes; }
  uint8_t* tx_buf(unsigned i) { return mem.base + (64 + i) * kBufBytes; }
  void post_rx_buffers(unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      post_rx(rxq, reinterpret_cast<uintptr_t>(rx_buf(i)), mem.mr->lkey, kBufBytes);
    }
    ring_rq(rxq);
  }
  // A frame to the port's own MAC (loop wire: TX returns to RX), `len` bytes, payload tagged.
  uint32_t make_frame(unsigned i, uint32_t len) {
    uint8_t* f = tx_buf(i);
    const uint8_t mac[6] = {0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01};
    memcpy(f, mac, 6);
    memcpy(f + 6, mac, 6);
    f[12] = 0x88;  // local experimental EtherType: not IP, goes to the default queue
    f[13] = 0xb5;
    for (uint32_t k = 14; k < len; ++k) f[k] = static_cast<uint8_t>(i * 7 + k);
    return len;
  }
};

// The control channel's per-queue counters of the live SQ and RQ after `frames` frames.
void check_queue_counters(const LoopPort& p, int frames, bool exact_doorbells) {
  const std::string reply = control("counters 0");
  const std::string n = std::to_string(frames);
  const std::string sq = "\"sqs\":[{\"id\":" + std::to_string(p.txq.mqp.sq_id) + ",\"wqes\":" + n +
                         ",\"packets\":" + n + ",";
  const std::string rq = "\"rqs\":[{\"id\":" + std::to_string(p.rxq.mrwq.wq_id) + ",\"wqes\":" + n +
                         ",\"packets\":" + n + ",";
  EXPECT_NE(reply.find(sq), std::string::npos) << reply;
  EXPECT_NE(reply.find(rq), std::string::npos) << reply;
  if (exact_doorbells) {  // trap mode sees every store: one SQ doorbell per frame
    EXPECT_NE(reply.find("\"cqes\":" + n + ",\"error_cqes\":0,\"doorbells\":" + n + ","),
              std::string::npos)
        << reply;
  }
}

void check_loopback(int frames) {
  LoopPort p;
  ASSERT_TRUE(p.ok) << strerror(errno);
  p.post_rx_buffers(64);
  unsigned rx_slot = 0;
  for (int i = 0; i < frames; ++i) {
    const uint32_t len = p.make_frame(i % 64, 60 + (i % 5) * 100);
    post_tx(p.txq, reinterpret_cast<uintptr_t>(p.tx_buf(i % 64)), p.mem.mr->lkey, len);
    ring_sq(p.txq);
    hw::Cqe cqe{};
    ASSERT_TRUE(wait_cqe(p.txq.mcq.buf, p.txq.mcq.count, &p.txq.cq_head, &cqe, kTimeoutMs))
        << "no TX CQE for frame " << i;
    EXPECT_EQ(cqe.type(), hw::kCqeTxOkay);
    ASSERT_TRUE(wait_cqe(p.rxq.mcq.buf, p.rxq.mcq.count, &p.rxq.cq_head, &cqe, kTimeoutMs))
        << "no RX CQE for frame " << i;
    ASSERT_EQ(cqe.type(), hw::kCqeRxOkay);
    EXPECT_EQ(hw::RxPacketInfo::Length::get(cqe.rx_packet(0).dw0), len);
    EXPECT_EQ(memcmp(p.rx_buf(rx_slot), p.tx_buf(i % 64), len), 0);
    // Repost the consumed buffer, as DPDK's rx_burst does.
    post_rx(p.rxq, reinterpret_cast<uintptr_t>(p.rx_buf(rx_slot)), p.mem.mr->lkey, kBufBytes);
    ring_rq(p.rxq);
    rx_slot = (rx_slot + 1) % 64;
  }
  check_queue_counters(p, frames, scenario().config.doorbell == EmuConfig::kTrap);
}

// 150 frames wrap the 64-entry rings and CQs twice.
TEST(TrapDataPath, LoopbackThroughTrappedDoorbells) { check_loopback(150); }
TEST(PollDataPath, LoopbackThroughPolledDoorbells) { check_loopback(150); }
TEST(SplitDataPath, Loopback) { check_loopback(10); }

void check_completion_channel() {
  LoopPort p(/*channel=*/true);
  ASSERT_TRUE(p.ok) << strerror(errno);
  ibv_comp_channel* ch = p.rxq.channel;
  ASSERT_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);  // as DPDK
  ibv_cq* cq = nullptr;
  void* cq_ctx = nullptr;
  errno = 0;
  EXPECT_EQ(ibv_get_cq_event(ch, &cq, &cq_ctx), -1);
  EXPECT_EQ(errno, EAGAIN);
  p.post_rx_buffers(8);
  arm_cq(p.rxq.mrwq.db_page, p.rxq.mcq.cq_id, p.rxq.cq_head, p.rxq.mcq.count);
  const uint32_t len = p.make_frame(0, 64);
  post_tx(p.txq, reinterpret_cast<uintptr_t>(p.tx_buf(0)), p.mem.mr->lkey, len);
  ring_sq(p.txq);
  pollfd pfd{ch->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, kTimeoutMs), 1) << "no completion event";
  ASSERT_EQ(ibv_get_cq_event(ch, &cq, &cq_ctx), 0);
  EXPECT_EQ(cq, p.rxq.cq);
  EXPECT_EQ(cq_ctx, &p.rxq);
  ibv_ack_cq_events(cq, 1);
  EXPECT_EQ(cq->comp_events_completed, 1u);
  errno = 0;
  EXPECT_EQ(ibv_get_cq_event(ch, &cq, &cq_ctx), -1);  // one-shot
  EXPECT_EQ(errno, EAGAIN);
}

TEST(TrapDataPath, CompletionChannelEvent) { check_completion_channel(); }
TEST(PollDataPath, CompletionChannelEvent) { check_completion_channel(); }

// The VF's bad-doorbell counter from the control channel's `counters 0` reply.
uint64_t bad_doorbells() {
  const std::string reply = control("counters 0");
  const std::string key = "\"bad_doorbells\":";
  const size_t at = reply.find(key);
  EXPECT_NE(at, std::string::npos) << reply;
  return at == std::string::npos ? 0 : std::stoull(reply.substr(at + key.size()));
}

// A port stopped right after its last burst: SQ and RQ doorbells stored, then every queue
// destroyed at once. The doorbells reach their queues before they go away (trap mode: out of the
// trap FIFO; poll mode: sampled), so none counts as bad.
void check_ring_then_destroy() {
  constexpr int kCycles = 40;
  const uint64_t before = bad_doorbells();
  for (int i = 0; i < kCycles; ++i) {
    LoopPort p;
    ASSERT_TRUE(p.ok) << strerror(errno);
    p.post_rx_buffers(4);
    post_tx(p.txq, reinterpret_cast<uintptr_t>(p.tx_buf(0)), p.mem.mr->lkey, p.make_frame(0, 60));
    ring_sq(p.txq);
  }  // ~LoopPort destroys the queues
  printf("%d ring-then-destroy cycles\n", kCycles);
  EXPECT_EQ(bad_doorbells() - before, 0u);
}

TEST(TrapDataPath, DoorbellsRungJustBeforeTheDestroyAreNotBad) { check_ring_then_destroy(); }
TEST(PollDataPath, DoorbellsRungJustBeforeTheDestroyAreNotBad) { check_ring_then_destroy(); }

// A DPDK secondary maps the primary's cmd_fd at offset 0 and rings doorbells through that mapping.
void check_second_mapping(bool expect_read_only) {
  LoopPort p;
  ASSERT_TRUE(p.ok) << strerror(errno);
  void* page = mmap(nullptr, 4096, PROT_WRITE, MAP_SHARED, p.port.ctx->cmd_fd, 0);
  ASSERT_NE(page, MAP_FAILED) << strerror(errno);
  // Trap mode: read-only, every store faults into the trap. Poll mode: mapped as asked.
  EXPECT_EQ(mapping_perms(page), expect_read_only ? "r--s" : "-w-s");
  p.txq.mqp.db_page = page;
  p.rxq.mrwq.db_page = page;
  p.post_rx_buffers(4);
  const uint32_t len = p.make_frame(0, 100);
  post_tx(p.txq, reinterpret_cast<uintptr_t>(p.tx_buf(0)), p.mem.mr->lkey, len);
  ring_sq(p.txq);
  hw::Cqe cqe{};
  EXPECT_TRUE(wait_cqe(p.txq.mcq.buf, p.txq.mcq.count, &p.txq.cq_head, &cqe, kTimeoutMs));
  EXPECT_TRUE(wait_cqe(p.rxq.mcq.buf, p.rxq.mcq.count, &p.rxq.cq_head, &cqe, kTimeoutMs));
  EXPECT_EQ(hw::RxPacketInfo::Length::get(cqe.rx_packet(0).dw0), len);
  EXPECT_EQ(munmap(page, 4096), 0);
}

TEST(TrapDataPath, DoorbellsThroughASecondMappingOfCmdFd) { check_second_mapping(true); }
TEST(PollDataPath, DoorbellsThroughASecondMappingOfCmdFd) { check_second_mapping(false); }

// The SQ doorbell of a frame the primary posted, rung by another process.
void check_secondary_process(bool trap) {
  LoopPort p;
  ASSERT_TRUE(p.ok) << strerror(errno);
  p.post_rx_buffers(4);
  const uint32_t len = p.make_frame(0, 200);
  post_tx(p.txq, reinterpret_cast<uintptr_t>(p.tx_buf(0)), p.mem.mr->lkey, len);
  const uint64_t doorbell = hw::sq_doorbell(p.txq.mqp.sq_id, p.txq.head_bu * hw::kBasicUnit);
  ASSERT_EQ(ring_from_secondary(p.port.ctx->cmd_fd, hw::kSqDoorbellOffset, doorbell, trap, 20000),
            0);
  hw::Cqe cqe{};
  ASSERT_TRUE(wait_cqe(p.txq.mcq.buf, p.txq.mcq.count, &p.txq.cq_head, &cqe, kTimeoutMs));
  EXPECT_EQ(cqe.type(), hw::kCqeTxOkay);
  ASSERT_TRUE(wait_cqe(p.rxq.mcq.buf, p.rxq.mcq.count, &p.rxq.cq_head, &cqe, kTimeoutMs));
  EXPECT_EQ(hw::RxPacketInfo::Length::get(cqe.rx_packet(0).dw0), len);
}

TEST(TrapDataPath, DoorbellFromASecondaryProcess) { check_secondary_process(true); }

// A process that does not run the VF may open it to query it, as DPDK 24.11's net_mana does in a
// secondary; it creates no object.
TEST(TrapDataPath, ASecondaryOpensQueriesAndClosesTheVf) {
  LoopPort p;
  ASSERT_TRUE(p.ok) << strerror(errno);
  EXPECT_EQ(open_from_secondary("7870:00:00.0", 20000), 0);
}
TEST(PollDataPath, DoorbellFromASecondaryProcess) { check_secondary_process(false); }

}  // namespace
}  // namespace mana::emu::test
