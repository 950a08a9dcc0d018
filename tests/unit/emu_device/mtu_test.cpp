// SPDX-License-Identifier: BSD-3-Clause
// The vPort MTU follows the netdev's sysfs `mtu` file when a QP configures the vPort, up to hw
// adapter-mtu (doc/emulator.md "MTU"), on both directions.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include "driver.h"
#include "frames.h"

namespace mana::emu::test {
namespace {

FlowSpec udp(uint32_t frame_len) {
  FlowSpec f;
  f.src = {10, 0, 0, 1};
  f.dst = {10, 0, 0, 2};
  f.payload = frame_len - 14 - 20 - 8;
  f.src_mac = port_mac(0);
  f.dst_mac = port_mac(0);
  return f;
}

class MtuFile {
 public:
  explicit MtuFile(const char* value) {
    char tmpl[] = "/tmp/mana-emu-mtu-XXXXXX";
    const int fd = mkstemp(tmpl);
    EXPECT_GE(fd, 0);
    path = tmpl;
    EXPECT_EQ(write(fd, value, strlen(value)), static_cast<ssize_t>(strlen(value)));
    close(fd);
  }
  ~MtuFile() { unlink(path.c_str()); }
  std::string path;
};

VfConfig config_with(const MtuFile& file, uint32_t adapter_mtu = 9000) {
  VfConfig c = test_config(1);
  c.ports[0].mtu_file = file.path;
  c.hw.adapter_mtu = adapter_mtu;
  return c;
}

uint32_t tx_result(Driver& d, TxQueue& tx, uint32_t frame_len, unsigned segments = 1) {
  tx.post_frame(build_frame(udp(frame_len)), {}, segments);
  tx.doorbell();
  d.dev().poll();
  std::vector<uint32_t> types;
  while (const hw::Cqe* c = tx.cq.next()) types.push_back(c->type());
  EXPECT_EQ(types.size(), 1u);
  return types.empty() ? 0 : types[0];
}

TEST(VportMtu, TxFollowsTheNetdevMtuInOneOrSeveralSegments) {
  MtuFile file("9000\n");
  VfConfig c = config_with(file);
  Driver d(c, 8 << 20);
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  EXPECT_EQ(tx_result(d, tx, 9014), hw::kCqeTxOkay);
  EXPECT_EQ(tx_result(d, tx, 9014, 3), hw::kCqeTxOkay);
  EXPECT_EQ(tx_result(d, tx, 9015, 3), hw::kCqeTxMtuDrop);
  EXPECT_EQ(d.wire(0).sent.size(), 2u);
  EXPECT_EQ(d.wire(0).sent[1].size(), 9014u);
}

TEST(VportMtu, RxDropsFramesAboveTheNetdevMtu) {
  MtuFile file("4000\n");
  VfConfig c = config_with(file);
  Driver d(c, 8 << 20);
  RxSet rx(d, 1, 1);
  ASSERT_EQ(rx.status, 0);
  rx.post(0, 8, 9216);
  rx.doorbell(0);
  d.wire(0).incoming.push_back(build_frame(udp(4014)));
  d.wire(0).incoming.push_back(build_frame(udp(4015)));
  d.dev().poll();
  unsigned completions = 0;
  while (const hw::Cqe* cqe = rx.queues[0]->cq.next()) completions += cqe->type() == hw::kCqeRxOkay;
  EXPECT_EQ(completions, 1u);
  EXPECT_EQ(d.dev().port_counters(0).rx_mtu_drops, 1u);
}

TEST(VportMtu, AnMtuAboveTheAdapterMtuIsIgnored) {
  MtuFile file("9000\n");
  VfConfig c = config_with(file, 1500);
  Driver d(c);
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  EXPECT_EQ(tx_result(d, tx, 1514), hw::kCqeTxOkay);
  EXPECT_EQ(tx_result(d, tx, 1515), hw::kCqeTxMtuDrop);
}

TEST(VportMtu, UnderVportMtuAdapterTheNetdevMtuDoesNotLimit) {
  MtuFile file("1500\n");
  VfConfig c = config_with(file, 9000);
  c.hw.vport_mtu_adapter = true;
  Driver d(c, 8 << 20);
  TxQueue tx(d, 1);
  ASSERT_EQ(tx.status, 0);
  EXPECT_EQ(tx_result(d, tx, 9014, 3), hw::kCqeTxOkay);
  EXPECT_EQ(tx_result(d, tx, 9015, 3), hw::kCqeTxMtuDrop);
  RxSet rx(d, 1, 1);
  ASSERT_EQ(rx.status, 0);
  rx.post(0, 8, 9216);
  rx.doorbell(0);
  d.wire(0).incoming.push_back(build_frame(udp(4014)));
  d.dev().poll();
  unsigned completions = 0;
  while (const hw::Cqe* cqe = rx.queues[0]->cq.next()) completions += cqe->type() == hw::kCqeRxOkay;
  EXPECT_EQ(completions, 1u);
  EXPECT_EQ(d.dev().port_counters(0).rx_mtu_drops, 0u);
}

}  // namespace
}  // namespace mana::emu::test
