// SPDX-License-Identifier: BSD-3-Clause
#include "config/config.h"

#include <gtest/gtest.h>

#include "config/fs_util.h"
#include "temp_dir.h"

namespace mana::emu {
namespace {

EmuConfig sample_config() {
  EmuConfig c;
  c.root = "/tmp/mana-emu.abc123";
  c.control = "/tmp/mana-emu.abc123/ctl.sock";
  c.doorbell = EmuConfig::kPoll;
  c.device_split = true;
  c.limits = EmuConfig::kLimits2025;
  VfConfig a;
  a.pci_addr = "7870:00:00.0";
  a.rx_coalescing = true;
  a.ports.resize(2);
  a.ports[0] = {{0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01}, "eth1", false, "pair"};
  a.ports[1] = {{0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02}, "eth2", true, "pair"};
  VfConfig b;
  b.pci_addr = "7870:00:01.0";
  b.anti_spoof = false;
  b.ports.push_back({{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee}, "mana9", false, "tap:tap0"});
  b.ports.back().netvsc = "seth9";
  b.ports.push_back({{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xef}, "mana10", false, "shm:link-a"});
  b.ports.back().uio_netvsc = true;
  b.ports.push_back(
      {{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xf0}, "mana11", false, "fabric:az", {198, 18, 0, 10}});
  c.vfs = {a, b};
  c.kernel = {false, false, 19};
  return c;
}

TEST(EmuConfig, FormatThenParseGivesTheSameConfig) {
  const EmuConfig original = sample_config();
  const std::string text = format_config(original);
  EmuConfig parsed;
  std::string error;
  ASSERT_TRUE(parse_config(text, "test", &parsed, &error)) << error << "\n" << text;
  EXPECT_EQ(parsed.root, original.root);
  EXPECT_EQ(parsed.control, original.control);
  EXPECT_EQ(parsed.doorbell, EmuConfig::kPoll);
  EXPECT_TRUE(parsed.device_split);
  EXPECT_EQ(parsed.limits, EmuConfig::kLimits2025);
  EXPECT_FALSE(parsed.kernel.mana_ib);
  EXPECT_FALSE(parsed.kernel.ib_uverbs);
  EXPECT_EQ(parsed.kernel.driver_id, 19u);
  ASSERT_EQ(parsed.vfs.size(), 2u);
  for (size_t v = 0; v < 2; ++v) {
    const VfConfig& want = original.vfs[v];
    const VfConfig& got = parsed.vfs[v];
    EXPECT_EQ(got.pci_addr, want.pci_addr);
    EXPECT_EQ(got.rx_coalescing, want.rx_coalescing);
    EXPECT_EQ(got.anti_spoof, want.anti_spoof);
    EXPECT_EQ(got.limits.max_qp_wr, 2048u);
    EXPECT_EQ(got.limits.max_mr, 0xFFFFFFu);
    ASSERT_EQ(got.ports.size(), want.ports.size());
    for (size_t p = 0; p < want.ports.size(); ++p) {
      EXPECT_EQ(got.ports[p].mac, want.ports[p].mac);
      EXPECT_EQ(got.ports[p].ifname, want.ports[p].ifname);
      EXPECT_EQ(got.ports[p].netdev_up, want.ports[p].netdev_up);
      EXPECT_EQ(got.ports[p].wire, want.ports[p].wire);
      EXPECT_EQ(got.ports[p].ipv4, want.ports[p].ipv4);
      EXPECT_EQ(got.ports[p].netvsc, want.ports[p].netvsc);
      EXPECT_EQ(got.ports[p].uio_netvsc, want.ports[p].uio_netvsc);
    }
  }
  EXPECT_EQ(format_config(parsed), text);
}

TEST(EmuConfig, DeviceCpuIsOptionalAndRoundTrips) {
  EmuConfig c = sample_config();
  EXPECT_EQ(format_config(c).find("device_cpu"), std::string::npos);  // not pinned: not written
  c.device_cpu = 1;
  EmuConfig parsed;
  std::string error;
  ASSERT_TRUE(parse_config(format_config(c), "test", &parsed, &error)) << error;
  EXPECT_EQ(parsed.device_cpu, 1);
}

TEST(EmuConfig, LayoutExampleParsesWithDefaults) {
  const char* text =
      "root=/r\n"
      "# a comment line\n"
      "vf pci=7870:00:00.0   # trailing comment\n"
      "port mac=00:0D:3A:00:00:01 ifname=eth1\n";
  EmuConfig c;
  std::string error;
  ASSERT_TRUE(parse_config(text, "cfg", &c, &error)) << error;
  EXPECT_EQ(c.control, "/r/control.sock");
  EXPECT_EQ(c.doorbell, EmuConfig::kTrap);
  EXPECT_FALSE(c.device_split);
  EXPECT_EQ(c.limits, EmuConfig::kLimits6_2);
  ASSERT_EQ(c.vfs.size(), 1u);
  EXPECT_EQ(c.vfs[0].limits.max_qp_wr, 256u);
  EXPECT_EQ(c.vfs[0].limits.max_mr, 0x7FFFFFFFu);
  EXPECT_FALSE(c.vfs[0].rx_coalescing);
  ASSERT_EQ(c.vfs[0].ports.size(), 1u);
  EXPECT_EQ(format_mac(c.vfs[0].ports[0].mac), "00:0d:3a:00:00:01");
  EXPECT_EQ(c.vfs[0].ports[0].wire, "loop");
  EXPECT_FALSE(c.vfs[0].ports[0].netdev_up);
}

TEST(EmuConfig, LoadConfigReadsAFileAndNamesItInErrors) {
  testing::TempDir dir;
  std::string error;
  const std::string path = dir.path() + "/config";
  ASSERT_TRUE(write_file(path, format_config(sample_config()), &error)) << error;
  EmuConfig c;
  ASSERT_TRUE(load_config(path, &c, &error)) << error;
  EXPECT_EQ(c.vfs.size(), 2u);
  ASSERT_TRUE(write_file(path, "root=/r\nbogus=1\n", &error));
  EXPECT_FALSE(load_config(path, &c, &error));
  EXPECT_EQ(error, path + ":2: unknown key 'bogus'");
  EXPECT_FALSE(load_config(dir.path() + "/missing", &c, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

struct BadConfig {
  const char* text;
  const char* error;  // the whole expected message
};

class EmuConfigErrors : public ::testing::TestWithParam<BadConfig> {};

TEST_P(EmuConfigErrors, NamesTheLineAndTheReason) {
  EmuConfig c;
  std::string error;
  EXPECT_FALSE(parse_config(GetParam().text, "cfg", &c, &error));
  EXPECT_EQ(error, GetParam().error);
}

#define VF0 "vf pci=7870:00:00.0\n"
#define PORT1 "port mac=00:0d:3a:00:00:01 ifname=eth1\n"

INSTANTIATE_TEST_SUITE_P(
    AllErrors, EmuConfigErrors,
    ::testing::Values(
        BadConfig{"root=/r\nfoo=1\n", "cfg:2: unknown key 'foo'"},
        BadConfig{"root=/r\nroot=/s\n", "cfg:2: duplicate key 'root'"},
        BadConfig{"root=/r\ndoorbell=fast\n",
                  "cfg:2: bad value 'fast' for 'doorbell' (expected trap or poll)"},
        BadConfig{"root=/r\ndevice_split=yes\n",
                  "cfg:2: bad value 'yes' for 'device_split' (expected 0 or 1)"},
        BadConfig{"root=/r\nlimits=6.5\n",
                  "cfg:2: bad value '6.5' for 'limits' (expected 6.2 or 2025)"},
        BadConfig{"root=/r\ndevice_cpu=-1\n",
                  "cfg:2: bad value '-1' for 'device_cpu' (expected a CPU number)"},
        BadConfig{"root\n", "cfg:1: expected key=value, got 'root'"},
        BadConfig{"root=\n", "cfg:1: empty value for 'root'"},
        BadConfig{"=x\n", "cfg:1: expected key=value, got '=x'"},
        BadConfig{"root=/r doorbell=trap\n",
                  "cfg:1: one key=value per line outside vf/port records"},
        BadConfig{"root=/r\n" VF0 PORT1 "doorbell=poll\n",
                  "cfg:4: global settings must come before the first vf"},
        BadConfig{"root=/r\nport mac=00:0d:3a:00:00:01 ifname=eth1\n",
                  "cfg:2: port record before any vf record"},
        BadConfig{"root=/r\nvf coalesce=1\n", "cfg:2: vf record without pci="},
        BadConfig{"root=/r\nvf pci=7870:00:20.0\n",
                  "cfg:2: bad value '7870:00:20.0' for 'pci' (expected dddd:bb:dd.f)"},
        BadConfig{"root=/r\nvf pci=7870:00:00.0 pci=7870:00:01.0\n", "cfg:2: duplicate key 'pci'"},
        BadConfig{"root=/r\nvf pci=7870:00:00.0 speed=10\n", "cfg:2: unknown key 'speed'"},
        BadConfig{"root=/r\nvf pci=7870:00:00.0 coalesce=2\n",
                  "cfg:2: bad value '2' for 'coalesce' (expected 0 or 1)"},
        BadConfig{"root=/r\nvf pci=7870:00:00.0 anti_spoof=on\n",
                  "cfg:2: bad value 'on' for 'anti_spoof' (expected 0 or 1)"},
        BadConfig{"root=/r\n" VF0 "port ifname=eth1\n", "cfg:3: port record without mac="},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01\n",
                  "cfg:3: port record without ifname="},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00 ifname=eth1\n",
                  "cfg:3: bad value '00:0d:3a:00:00' for 'mac' (expected aa:bb:cc:dd:ee:ff)"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 up=true\n",
                  "cfg:3: bad value 'true' for 'up' (expected 0 or 1)"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 mtu=9000\n",
                  "cfg:3: unknown key 'mtu'"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=cable\n",
                  "cfg:3: unknown wire 'cable' (loop, pair, null, tap:<ifname>, shm:<name>, "
                  "fabric:<name>)"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=fabric:az\n",
                  "cfg:3: wire fabric:az needs the port's IPv4 address (--ip A.B.C.D, or ip= in "
                  "the port record)"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 ip=198.18.0.300\n",
                  "cfg:3: bad value '198.18.0.300' for 'ip' (expected A.B.C.D)"},
        BadConfig{"root=/r\n" VF0
                  "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=fabric:az ip=198.18.0.1\n"
                  "port mac=00:0d:3a:00:00:02 ifname=eth2 wire=fabric:az ip=198.18.0.1\n",
                  "cfg:4: IP 198.18.0.1 is used by another port of fabric:az"},
        BadConfig{"root=/r\n" VF0
                  "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=fabric:az ip=224.0.0.1\n",
                  "cfg:3: IP 224.0.0.1 is not a unicast host address"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=tap:\n",
                  "cfg:3: wire 'tap:': tap needs an interface name of 1..15 characters"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=shm:a/b\n",
                  "cfg:3: wire 'shm:a/b': shm needs a name without '/' or spaces"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=pair\n",
                  "cfg:3: wire pair joins ports 0 and 1 of a VF: both need wire=pair"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=eth1 wire=tap:t0\n"
                  "port mac=00:0d:3a:00:00:02 ifname=eth2 wire=tap:t0\n",
                  "cfg:4: wire tap:t0 is used by another port (one TAP per port)"},
        BadConfig{"root=/r\n" VF0 PORT1 "port mac=00:0d:3a:00:00:01 ifname=eth2\n",
                  "cfg:4: duplicate MAC 00:0d:3a:00:00:01"},
        BadConfig{"root=/r\n" VF0 PORT1 "port mac=00:0d:3a:00:00:02 ifname=eth1\n",
                  "cfg:4: duplicate ifname eth1"},
        BadConfig{"root=/r\n" VF0 "port mac=01:0d:3a:00:00:01 ifname=eth1\n",
                  "cfg:3: MAC 01:0d:3a:00:00:01 is a multicast address"},
        BadConfig{"root=/r\n" VF0 "port mac=00:00:00:00:00:00 ifname=eth1\n",
                  "cfg:3: MAC 00:00:00:00:00:00 is not valid"},
        BadConfig{"root=/r\n" VF0 "port mac=00:0d:3a:00:00:01 ifname=averyveryverylongname\n",
                  "cfg:3: bad interface name 'averyveryverylongname'"},
        BadConfig{"root=/r\n" VF0 PORT1 "vf pci=7870:00:00.0\n"
                  "port mac=00:0d:3a:00:00:02 ifname=eth2\n",
                  "cfg:4: duplicate PCI address 7870:00:00.0"},
        BadConfig{"root=/r\n" VF0, "cfg:2: VF 7870:00:00.0 has no port"},
        BadConfig{"root=/r\n" VF0
                  "port mac=00:0d:3a:00:00:01 ifname=e1\nport mac=00:0d:3a:00:00:02 ifname=e2\n"
                  "port mac=00:0d:3a:00:00:03 ifname=e3\nport mac=00:0d:3a:00:00:04 ifname=e4\n"
                  "port mac=00:0d:3a:00:00:05 ifname=e5\nport mac=00:0d:3a:00:00:06 ifname=e6\n"
                  "port mac=00:0d:3a:00:00:07 ifname=e7\nport mac=00:0d:3a:00:00:08 ifname=e8\n"
                  "port mac=00:0d:3a:00:00:09 ifname=e9\n",
                  "cfg:2: VF 7870:00:00.0 has 9 ports (at most 8)"},
        BadConfig{"doorbell=trap\n" VF0 PORT1, "cfg: missing root="},
        BadConfig{"root=/r\n", "cfg: no vf record"}));

TEST(ValueParsers, MacAddresses) {
  MacAddress mac;
  ASSERT_TRUE(parse_mac("AA:bb:0C:d0:E1:ff", &mac));
  EXPECT_EQ(format_mac(mac), "aa:bb:0c:d0:e1:ff");
  for (const char* bad : {"", "aa:bb:cc:dd:ee", "aa:bb:cc:dd:ee:ff:00", "aa-bb-cc-dd-ee-ff",
                          "ga:bb:cc:dd:ee:ff", "a:bb:cc:dd:ee:fff", "aa:bb:cc:dd:ee:f "}) {
    EXPECT_FALSE(parse_mac(bad, &mac)) << bad;
  }
}

TEST(ValueParsers, PciAddresses) {
  std::string canonical;
  ASSERT_TRUE(parse_pci_addr("7870:0A:1f.7", &canonical));
  EXPECT_EQ(canonical, "7870:0a:1f.7");
  for (const char* bad : {"", "7870:00:00", "00:00.0", "7870:00:20.0", "7870:00:00.8",
                          "7870-00:00.0", "787g:00:00.0", "7870:00:00.0 "}) {
    EXPECT_FALSE(parse_pci_addr(bad, &canonical)) << bad;
  }
}

TEST(ValueParsers, SplitWordsOnBlanks) {
  EXPECT_EQ(split_words(" a\tbb  c=d\r"), (std::vector<std::string_view>{"a", "bb", "c=d"}));
  EXPECT_TRUE(split_words(" \t\r ").empty());
}

TEST(ValueParsers, NumbersAndWires) {
  uint32_t v = 0;
  EXPECT_TRUE(parse_uint("4294967295", UINT32_MAX, &v));
  EXPECT_EQ(v, UINT32_MAX);
  EXPECT_FALSE(parse_uint("4294967296", UINT32_MAX, &v));
  EXPECT_FALSE(parse_uint("9", 8, &v));
  EXPECT_FALSE(parse_uint("-1", 8, &v));
  EXPECT_FALSE(parse_uint("", 8, &v));
  Ipv4Address ip{};
  EXPECT_TRUE(parse_ipv4("198.18.0.1", &ip));
  EXPECT_EQ(format_ipv4(ip), "198.18.0.1");
  for (const char* bad : {"", "198.18.0", "198.18.0.1.", "198.18.0.256", "198.18.0.0001", "a.b.c.d",
                          "198.18..1", " 198.18.0.1"})
    EXPECT_FALSE(parse_ipv4(bad, &ip)) << bad;
  std::string error;
  for (const char* good : {"loop", "pair", "null", "tap:tap0", "shm:x", "fabric:az"}) {
    EXPECT_TRUE(check_wire_spec(good, &error)) << good;
  }
  for (const char* bad :
       {"", "Loop", "tap:", "tap:0123456789abcdef", "shm:", "shm:a b", "fabric:", "fabric:a/b"}) {
    EXPECT_FALSE(check_wire_spec(bad, &error)) << bad;
  }
}

}  // namespace
}  // namespace mana::emu
