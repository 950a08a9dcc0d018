// SPDX-License-Identifier: BSD-3-Clause
#include "devargs.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <bus_pci_driver.h>
#include <gtest/gtest.h>
#include <rte_devargs.h>
#include <rte_log.h>
#include <rte_pci.h>

namespace {

struct Parsed {
  int rc;
  mana::Devargs d;
  std::string error;
};

Parsed parse(const char* args) {
  Parsed p;
  char error[256];
  p.rc = mana::parse_devargs(args, p.d, error, sizeof(error));
  p.error = error;
  return p;
}

rte_ether_addr mac(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint8_t e, uint8_t f) {
  return rte_ether_addr{{a, b, c, d, e, f}};
}

TEST(Devargs, EmptyMeansEveryPort) {
  for (const char* args : {static_cast<const char*>(nullptr), ""}) {
    Parsed p = parse(args);
    EXPECT_EQ(p.rc, 0);
    EXPECT_EQ(p.d.mac_count, 0u);
    EXPECT_TRUE(p.d.wants(mac(1, 2, 3, 4, 5, 6)));
  }
}

TEST(Devargs, OneMac) {
  Parsed p = parse("mac=00:0d:3a:76:3b:d0");
  ASSERT_EQ(p.rc, 0) << p.error;
  ASSERT_EQ(p.d.mac_count, 1u);
  rte_ether_addr expected = mac(0x00, 0x0d, 0x3a, 0x76, 0x3b, 0xd0);
  EXPECT_TRUE(rte_is_same_ether_addr(&p.d.macs[0], &expected));
}

TEST(Devargs, EightMacsInOrder) {
  std::string args;
  for (int i = 0; i < 8; i++)
    args += (i ? "," : "") + std::string("mac=02:00:00:00:00:0") + char('0' + i);
  Parsed p = parse(args.c_str());
  ASSERT_EQ(p.rc, 0) << p.error;
  ASSERT_EQ(p.d.mac_count, 8u);
  for (unsigned i = 0; i < 8; i++) EXPECT_EQ(p.d.macs[i].addr_bytes[5], i);
  EXPECT_TRUE(p.d.wants(mac(2, 0, 0, 0, 0, 7)));
  EXPECT_FALSE(p.d.wants(mac(2, 0, 0, 0, 0, 8)));
}

TEST(Devargs, NineMacsRejected) {
  std::string args;
  for (int i = 0; i < 9; i++)
    args += (i ? "," : "") + std::string("mac=02:00:00:00:00:0") + char('0' + i);
  Parsed p = parse(args.c_str());
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_NE(p.error.find("more than 8"), std::string::npos) << p.error;
  EXPECT_EQ(p.d.mac_count, 0u);
}

TEST(Devargs, MalformedMacRejected) {
  for (const char* args :
       {"mac=00:0d:3a:76:3b", "mac=zz:0d:3a:76:3b:d0", "mac=", "mac=00:0d:3a:76:3b:d0:11"}) {
    Parsed p = parse(args);
    EXPECT_EQ(p.rc, -EINVAL) << args;
    EXPECT_NE(p.error.find("MAC"), std::string::npos) << args << ": " << p.error;
  }
}

TEST(Devargs, UnknownKeyRejected) {
  Parsed p = parse("mac=00:0d:3a:76:3b:d0,queues=4");
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_NE(p.error.find("mac=<mac_addr>"), std::string::npos) << p.error;
}

TEST(Devargs, RecoveryTimeout) {
  EXPECT_EQ(parse("").d.recovery_timeout_s, mana::kDefaultRecoveryTimeout);
  Parsed p = parse("mac=00:0d:3a:76:3b:d0,recovery_timeout=30");
  ASSERT_EQ(p.rc, 0) << p.error;
  EXPECT_EQ(p.d.recovery_timeout_s, 30u);
  EXPECT_EQ(parse("recovery_timeout=0").d.recovery_timeout_s, 0u);
  for (const char* args : {"recovery_timeout=", "recovery_timeout=-1", "recovery_timeout=1s",
                           "recovery_timeout=86401", "recovery_timeout=99999999999999999999"}) {
    Parsed bad = parse(args);
    EXPECT_EQ(bad.rc, -EINVAL) << args;
    EXPECT_NE(bad.error.find("bad recovery_timeout"), std::string::npos)
        << args << ": " << bad.error;
  }
}

TEST(Devargs, TxStallTimeout) {
  EXPECT_EQ(parse("").d.tx_stall_timeout_s, 15u);  // the kernel's watchdog_timeo for MANA
  Parsed p = parse("recovery_timeout=30,tx_stall_timeout=2");
  ASSERT_EQ(p.rc, 0) << p.error;
  EXPECT_EQ(p.d.tx_stall_timeout_s, 2u);
  EXPECT_EQ(p.d.recovery_timeout_s, 30u);
  EXPECT_EQ(parse("tx_stall_timeout=0").d.tx_stall_timeout_s, 0u);
  for (const char* args : {"tx_stall_timeout=", "tx_stall_timeout=2s", "tx_stall_timeout=3601"}) {
    Parsed bad = parse(args);
    EXPECT_EQ(bad.rc, -EINVAL) << args;
    EXPECT_NE(bad.error.find("bad tx_stall_timeout"), std::string::npos)
        << args << ": " << bad.error;
    EXPECT_NE(bad.error.find("0 (no watchdog) to 3600"), std::string::npos) << bad.error;
  }
}

// Given twice, even with the same value: refused with one line, as a MAC given twice.
TEST(Devargs, RecoveryTimeoutGivenTwiceRejected) {
  for (const char* args : {"recovery_timeout=30,recovery_timeout=60",
                           "recovery_timeout=30,mac=00:0d:3a:76:3b:d0,recovery_timeout=30"}) {
    Parsed p = parse(args);
    EXPECT_EQ(p.rc, -EINVAL) << args;
    EXPECT_EQ(p.error, "recovery_timeout is given twice in devargs: give it once") << args;
    EXPECT_EQ(p.d.recovery_timeout_s, mana::kDefaultRecoveryTimeout) << args;
  }
  Parsed p = parse("tx_stall_timeout=2,recovery_timeout=30,tx_stall_timeout=2");
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_EQ(p.error, "tx_stall_timeout is given twice in devargs: give it once");
}

TEST(Devargs, DuplicateMacRejected) {
  Parsed p = parse("mac=00:0d:3a:76:3b:d0,mac=00:0D:3A:76:3B:D0");
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_NE(p.error.find("twice"), std::string::npos) << p.error;
}

// Two -a for one PCI address: the bus gives the driver the first; the second's arguments are named
// in a warning instead of vanishing. Another device's entry is not a duplicate.
TEST(Devargs, SecondAllowEntryForTheSameDeviceIsNamed) {
  // Links the PCI bus library, whose constructor registers the bus that parses PCI addresses.
  void (*volatile link_pci_bus)(rte_pci_driver*) = rte_pci_register;
  ASSERT_NE(link_pci_bus, nullptr);
  for (const char* entry :
       {"7870:00:00.0,mac=00:0d:3a:00:00:01", "7870:00:00.0,mac=00:0d:3a:00:00:02",
        "0001:00:02.0,mac=00:0d:3a:00:00:03"})
    ASSERT_EQ(rte_devargs_add(RTE_DEVTYPE_ALLOWED, entry), 0) << entry;
  const rte_devargs* first = rte_devargs_next("pci", nullptr);
  ASSERT_NE(first, nullptr);
  const rte_devargs* other = rte_devargs_next("pci", rte_devargs_next("pci", first));
  ASSERT_NE(other, nullptr);
  rte_pci_addr dup{}, single{};
  ASSERT_EQ(rte_pci_addr_parse("7870:00:00.0", &dup), 0);
  ASSERT_EQ(rte_pci_addr_parse("0001:00:02.0", &single), 0);

  char* text = nullptr;
  size_t size = 0;
  FILE* log = open_memstream(&text, &size);
  ASSERT_NE(log, nullptr);
  rte_openlog_stream(log);
  const unsigned warned = mana::warn_ignored_allow_entries("7870:00:00.0", dup, first);
  const unsigned none = mana::warn_ignored_allow_entries("0001:00:02.0", single, other);
  rte_openlog_stream(nullptr);
  fclose(log);
  const std::string logged(text);
  free(text);
  EXPECT_EQ(warned, 1u);
  EXPECT_EQ(none, 0u);
  EXPECT_NE(logged.find("'mac=00:0d:3a:00:00:02'"), std::string::npos) << logged;
  EXPECT_NE(logged.find("-a 7870:00:00.0,mac=<mac1>,mac=<mac2>"), std::string::npos) << logged;
  EXPECT_EQ(logged.find("00:03"), std::string::npos) << logged;

  while (rte_devargs* da = rte_devargs_next("pci", nullptr)) rte_devargs_remove(da);
}

}  // namespace
