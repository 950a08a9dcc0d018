// SPDX-License-Identifier: BSD-3-Clause
#include "config/sysfs_tree.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "config/fs_util.h"
#include "config/run_folder.h"
#include "config/vmbus_tree.h"
#include "temp_dir.h"

namespace mana::emu {
namespace {

EmuConfig two_vf_config(const std::string& root, bool split) {
  EmuConfig c;
  c.root = root;
  c.control = root + "/control.sock";
  c.device_split = split;
  VfConfig a;
  a.pci_addr = "7870:00:00.0";
  a.ports = {{{0x00, 0x0d, 0x3a, 0, 0, 1}, "eth1", false, "pair"},
             {{0x00, 0x0d, 0x3a, 0, 0, 2}, "eth2", true, "pair"}};
  VfConfig b;
  b.pci_addr = "7870:00:01.0";
  b.ports = {{{0x00, 0x0d, 0x3a, 0, 1, 1}, "eth3", false, "loop"}};
  c.vfs = {a, b};
  return c;
}

std::string read(const std::string& path) {
  std::string text;
  EXPECT_TRUE(read_file(path, &text)) << path;
  return text;
}

std::string link_target(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  EXPECT_GT(n, 0) << path;
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  EXPECT_NE(d, nullptr) << dir;
  if (!d) return names;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  ::closedir(d);
  return names;
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

TEST(SysfsTree, PciDeviceFilesMatchTheLayout) {
  testing::TempDir dir;
  const EmuConfig c = two_vf_config(dir.path(), false);
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  const std::string pci = dir.path() + "/sys/bus/pci/devices/7870:00:00.0";
  EXPECT_EQ(entries(dir.path() + "/sys/bus/pci/devices"),
            (std::set<std::string>{"7870:00:00.0", "7870:00:01.0"}));
  EXPECT_EQ(entries(pci),
            (std::set<std::string>{"vendor", "device", "subsystem_vendor", "subsystem_device",
                                   "class", "numa_node", "resource", "uevent", "driver", "net"}));
  EXPECT_EQ(read(pci + "/vendor"), "0x1414\n");
  EXPECT_EQ(read(pci + "/device"), "0x00ba\n");
  EXPECT_EQ(read(pci + "/subsystem_vendor"), "0x1414\n");
  EXPECT_EQ(read(pci + "/subsystem_device"), "0x0001\n");
  EXPECT_EQ(read(pci + "/class"), "0x020000\n");
  EXPECT_EQ(read(pci + "/numa_node"), "0\n");
  std::string resource;
  for (int i = 0; i < 6; ++i)
    resource += "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
  EXPECT_EQ(read(pci + "/resource"), resource);
  EXPECT_EQ(read(pci + "/uevent"),
            "DRIVER=mana\nPCI_CLASS=20000\nPCI_ID=1414:00BA\nPCI_SUBSYS_ID=1414:0001\n"
            "PCI_SLOT_NAME=7870:00:00.0\n");
  EXPECT_EQ(link_target(pci + "/driver"), dir.path() + "/sys/bus/pci/drivers/mana");
  EXPECT_TRUE(is_dir(pci + "/driver"));
  EXPECT_EQ(entries(pci + "/net"), (std::set<std::string>{"eth1", "eth2"}));
  EXPECT_EQ(read(pci + "/net/eth1/address"), "00:0d:3a:00:00:01\n");
  EXPECT_EQ(read(pci + "/net/eth1/dev_port"), "0\n");
  EXPECT_EQ(read(pci + "/net/eth1/operstate"), "down\n");
  EXPECT_EQ(read(pci + "/net/eth2/address"), "00:0d:3a:00:00:02\n");
  EXPECT_EQ(read(pci + "/net/eth2/dev_port"), "1\n");
  EXPECT_EQ(read(pci + "/net/eth2/operstate"), "up\n");
  const std::string pci1 = dir.path() + "/sys/bus/pci/devices/7870:00:01.0";
  EXPECT_EQ(read(pci1 + "/net/eth3/address"), "00:0d:3a:00:01:01\n");
  EXPECT_EQ(read(pci1 + "/net/eth3/dev_port"), "0\n");
}

TEST(SysfsTree, RdmaDevicesWithoutSplitResolveThroughTheDeviceLink) {
  testing::TempDir dir;
  const EmuConfig c = two_vf_config(dir.path(), false);
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  const std::string ib = dir.path() + "/sys/class/infiniband";
  EXPECT_EQ(entries(ib), (std::set<std::string>{"mana_0", "mana_1"}));
  EXPECT_EQ(read(ib + "/mana_0/node_type"), "1: CA\n");
  EXPECT_EQ(link_target(ib + "/mana_0/device"), dir.path() + "/sys/bus/pci/devices/7870:00:00.0");
  EXPECT_EQ(link_target(ib + "/mana_1/device"), dir.path() + "/sys/bus/pci/devices/7870:00:01.0");
  // What the PMD reads through ibdev_path (doc/hardware.md §2.2).
  EXPECT_NE(read(ib + "/mana_1/device/uevent").find("PCI_SLOT_NAME=7870:00:01.0\n"),
            std::string::npos);
  EXPECT_EQ(read(ib + "/mana_0/device/net/eth2/dev_port"), "1\n");
  const auto devices = ib_devices(c);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].name, "mana_1");
  EXPECT_EQ(devices[1].vf, 1u);
  EXPECT_EQ(devices[1].kind, IbDeviceInfo::kCombined);
  EXPECT_EQ(devices[1].vendor_part_id, 0u);
  EXPECT_EQ(read(uverbs_dir(dir.path(), 1) + "/ibdev"), "mana_1\n");
}

TEST(SysfsTree, DeviceSplitGivesAnEthernetAndAnRnicDevicePerVf) {
  testing::TempDir dir;
  const EmuConfig c = two_vf_config(dir.path(), true);
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  const std::string ib = dir.path() + "/sys/class/infiniband";
  EXPECT_EQ(entries(ib), (std::set<std::string>{"manae_0", "mana_0", "manae_1", "mana_1"}));
  EXPECT_EQ(link_target(ib + "/manae_1/device"), dir.path() + "/sys/bus/pci/devices/7870:00:01.0");
  EXPECT_EQ(link_target(ib + "/mana_1/device"), dir.path() + "/sys/bus/pci/devices/7870:00:01.0");
  const auto devices = ib_devices(c);
  ASSERT_EQ(devices.size(), 4u);
  const char* names[] = {"manae_0", "mana_0", "manae_1", "mana_1"};
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(devices[k].name, names[k]);
    EXPECT_EQ(devices[k].vf, k / 2);
    EXPECT_EQ(devices[k].vendor_part_id, k % 2 ? 3u : 2u);
    EXPECT_EQ(devices[k].kind, k % 2 ? IbDeviceInfo::kRnic : IbDeviceInfo::kEthernet);
    EXPECT_EQ(read(uverbs_dir(dir.path(), k) + "/ibdev"), std::string(names[k]) + "\n");
  }
}

TEST(SysfsTree, HotRemovalMovesTheVfAwayAndBack) {
  testing::TempDir dir;
  EmuConfig c = two_vf_config(dir.path(), true);
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  const std::string pci = dir.path() + "/sys/bus/pci/devices/";
  const std::string ib = dir.path() + "/sys/class/infiniband/";
  ASSERT_TRUE(set_vf_present(c, 1, false, &error)) << error;
  EXPECT_FALSE(vf_present(c, 1));
  EXPECT_TRUE(vf_present(c, 0));
  EXPECT_EQ(entries(pci), (std::set<std::string>{"7870:00:00.0"}));
  EXPECT_EQ(entries(ib), (std::set<std::string>{"manae_0", "mana_0"}));
  EXPECT_TRUE(is_dir(dir.path() + "/removed/pci/7870:00:01.0"));
  EXPECT_FALSE(set_vf_present(c, 1, false, &error));
  EXPECT_EQ(error, "VF 1 is already removed");
  // The netdev state follows the VF while it is away.
  ASSERT_TRUE(set_operstate(c, 1, 0, true, &error)) << error;
  ASSERT_TRUE(set_vf_present(c, 1, true, &error)) << error;
  EXPECT_TRUE(vf_present(c, 1));
  EXPECT_EQ(entries(ib), (std::set<std::string>{"manae_0", "mana_0", "manae_1", "mana_1"}));
  EXPECT_NE(read(ib + "mana_1/device/uevent").find("PCI_SLOT_NAME=7870:00:01.0\n"),
            std::string::npos);
  EXPECT_EQ(read(pci + "7870:00:01.0/net/eth3/operstate"), "up\n");
  EXPECT_FALSE(set_vf_present(c, 1, true, &error));
  EXPECT_EQ(error, "VF 1 is present");
  EXPECT_FALSE(set_vf_present(c, 2, false, &error));
  EXPECT_EQ(error, "no VF 2");

  // Azure may bring a serviced VF back on another PCI bus: the PCI folder, its uevent and the RDMA
  // devices' `device` links follow; the RDMA device names stay.
  ASSERT_TRUE(set_vf_present(c, 1, false, &error)) << error;
  EXPECT_FALSE(set_vf_present(c, 1, true, &error, "7870:00:00.0"));
  EXPECT_EQ(error, "PCI address 7870:00:00.0 is taken by another VF");
  ASSERT_TRUE(set_vf_present(c, 1, true, &error, "7871:02:00.0")) << error;
  EXPECT_EQ(c.vfs[1].pci_addr, "7871:02:00.0");
  EXPECT_TRUE(vf_present(c, 1));
  EXPECT_EQ(entries(pci), (std::set<std::string>{"7870:00:00.0", "7871:02:00.0"}));
  for (const char* dev : {"manae_1", "mana_1"})
    EXPECT_NE(read(ib + dev + "/device/uevent").find("PCI_SLOT_NAME=7871:02:00.0\n"),
              std::string::npos)
        << dev;
  ASSERT_TRUE(set_vf_present(c, 1, false, &error)) << error;
  EXPECT_TRUE(is_dir(dir.path() + "/removed/pci/7871:02:00.0"));
}

TEST(SysfsTree, OperstateFollowsTheNetdev) {
  testing::TempDir dir;
  const EmuConfig c = two_vf_config(dir.path(), false);
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  const std::string eth2 = dir.path() + "/sys/bus/pci/devices/7870:00:00.0/net/eth2/operstate";
  ASSERT_TRUE(set_operstate(c, 0, 1, false, &error)) << error;
  EXPECT_EQ(read(eth2), "down\n");
  ASSERT_TRUE(set_operstate(c, 0, 1, true, &error)) << error;
  EXPECT_EQ(read(eth2), "up\n");
  EXPECT_FALSE(set_operstate(c, 0, 2, true, &error));
  EXPECT_EQ(error, "no port 2 on VF 0");
}

// mana-doctor's view (doc/emulator.md "Kernel setup faults"): class/net with the synthetic netvsc
// interface paired to its VF netdev, and /sys/module.
TEST(SysfsTree, NetvscInterfaceIsPairedWithItsVfNetdevByMac) {
  testing::TempDir dir;
  EmuConfig c = two_vf_config(dir.path(), false);
  c.vfs[0].ports[1].netvsc = "seth2";
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  const std::string net = dir.path() + "/sys/class/net";
  EXPECT_EQ(entries(net), (std::set<std::string>{"eth1", "eth2", "eth3", "seth2"}));
  const std::string vf_net = dir.path() + "/sys/bus/pci/devices/7870:00:00.0/net/eth2";
  EXPECT_EQ(link_target(net + "/eth2"), vf_net);
  EXPECT_EQ(read(net + "/seth2/address"), "00:0d:3a:00:00:02\n");
  EXPECT_EQ(read(net + "/seth2/operstate"), "up\n");  // as its VF netdev
  EXPECT_EQ(link_target(net + "/seth2/lower_eth2"), net + "/eth2");
  EXPECT_EQ(link_target(vf_net + "/master"), net + "/seth2");
  EXPECT_EQ(link_target(net + "/seth2/device/driver"),
            dir.path() + "/sys/bus/vmbus/drivers/hv_netvsc");
  EXPECT_EQ(entries(dir.path() + "/sys/module"),
            (std::set<std::string>{"mana", "mana_ib", "ib_uverbs"}));
}

// DPDK's vmbus bus view of a synthetic NIC bound to uio_hv_generic (doc/hardware.md §11.1); a
// device bound to hv_netvsc has the ids but no uio folder.
TEST(SysfsTree, UioNetvscDeviceAsUioHvGenericShowsIt) {
  testing::TempDir dir;
  EmuConfig c = two_vf_config(dir.path(), false);
  c.vfs[0].ports[0].netvsc = "seth1";
  c.vfs[1].ports[0].uio_netvsc = true;
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  const std::string devices = dir.path() + "/sys/bus/vmbus/devices";
  const std::string kernel = devices + "/f8615163-0000-1000-8000-000000000000";
  const std::string uio = devices + "/f8615163-0000-1000-8000-000100000000";
  EXPECT_EQ(entries(devices), (std::set<std::string>{"f8615163-0000-1000-8000-000000000000",
                                                     "f8615163-0000-1000-8000-000100000000"}));
  EXPECT_EQ(read(kernel + "/class_id"), "{f8615163-df3e-46c5-913f-f2d2f965ed0e}\n");
  EXPECT_EQ(read(kernel + "/id"), "14\n");
  EXPECT_FALSE(is_dir(kernel + "/uio"));
  EXPECT_EQ(read(uio + "/class_id"), "{f8615163-df3e-46c5-913f-f2d2f965ed0e}\n");
  EXPECT_EQ(read(uio + "/device_id"), "{f8615163-0000-1000-8000-000100000000}\n");
  EXPECT_EQ(read(uio + "/id"), "78\n");  // the second VMBus device: 14 + 64
  EXPECT_EQ(read(uio + "/monitor_id"), "0\n");
  EXPECT_EQ(read(uio + "/numa_node"), "0\n");
  EXPECT_EQ(link_target(uio + "/driver"), dir.path() + "/sys/bus/vmbus/drivers/uio_hv_generic");
  const std::string maps = uio + "/uio/uio0/maps";
  const char* names[] = {"txrx_rings\n", "int_page\n", "monitor_page\n", "recv:925200\n",
                         "send:925201\n"};
  const char* sizes[] = {"0x0000000000400000\n", "0x0000000000001000\n", "0x0000000000001000\n",
                         "0x0000000001f00000\n", "0x0000000001000000\n"};
  const std::vector<SyntheticNic> nics = synthetic_nics(c);
  ASSERT_EQ(nics.size(), 1u);
  for (unsigned i = 0; i < kVmbusMaps; ++i) {
    const std::string map = maps + "/map" + std::to_string(i);
    EXPECT_EQ(read(map + "/name"), names[i]) << i;
    EXPECT_EQ(read(map + "/size"), sizes[i]) << i;
    struct stat st {};
    ASSERT_EQ(stat(vmbus_map_file(dir.path(), nics[0], i).c_str(), &st), 0) << i;
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), vmbus_map_size(i)) << i;
  }
  // The primary channel: its ring file is map0; subchannels come and go with offers.
  EXPECT_EQ(vmbus_map_file(dir.path(), nics[0], 0), uio + "/channels/78/ring");
  EXPECT_EQ(read(uio + "/channels/78/subchannel_id"), "0\n");
  EXPECT_TRUE(path_exists(dir.path() + "/dev/uio0"));
  const std::string ring = offer_vmbus_subchannel(dir.path(), nics[0], 2, &error);
  EXPECT_EQ(ring, uio + "/channels/80/ring") << error;
  EXPECT_EQ(read(uio + "/channels/80/subchannel_id"), "2\n");
  EXPECT_EQ(entries(uio + "/channels"), (std::set<std::string>{"78", "80"}));  // no temporary left
  remove_vmbus_subchannels(dir.path(), nics[0]);
  EXPECT_EQ(entries(uio + "/channels"), (std::set<std::string>{"78"}));
}

TEST(SysfsTree, MissingModulesRemoveTheirDevices) {
  testing::TempDir dir;
  EmuConfig c = two_vf_config(dir.path(), false);
  c.kernel.ib_uverbs = false;
  std::string error;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  EXPECT_EQ(entries(dir.path() + "/sys/module"), (std::set<std::string>{"mana", "mana_ib"}));
  EXPECT_EQ(entries(dir.path() + "/sys/class/infiniband"),
            (std::set<std::string>{"mana_0", "mana_1"}));
  EXPECT_FALSE(is_dir(dir.path() + "/sys/class/infiniband_verbs"));

  testing::TempDir dir2;
  c = two_vf_config(dir2.path(), false);
  c.kernel.mana_ib = false;
  ASSERT_TRUE(write_sysfs_tree(c, &error)) << error;
  EXPECT_EQ(entries(dir2.path() + "/sys/module"), (std::set<std::string>{"mana", "ib_uverbs"}));
  EXPECT_FALSE(is_dir(dir2.path() + "/sys/class/infiniband"));
  // hot removal still works without RDMA devices
  ASSERT_TRUE(set_vf_present(c, 0, false, &error)) << error;
  ASSERT_TRUE(set_vf_present(c, 0, true, &error)) << error;
}

TEST(RunFolder, MakesAFreshFolderUnderTmpdirWithConfigAndTree) {
  testing::TempDir dir;
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", (dir.path() + "/").c_str(), 1);
  EmuConfig c = two_vf_config("", false);
  std::string error;
  const bool made = make_run_folder(&c, &error);
  if (old) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_TRUE(made) << error;
  EXPECT_EQ(c.root.rfind(dir.path() + "/mana-emu.", 0), 0u) << c.root;
  EXPECT_EQ(c.control, c.root + "/control.sock");
  EmuConfig loaded;
  ASSERT_TRUE(load_config(config_path(c.root), &loaded, &error)) << error;
  EXPECT_EQ(format_config(loaded), format_config(c));
  EXPECT_TRUE(is_dir(c.root + "/sys/bus/pci/devices/7870:00:01.0"));
}

}  // namespace
}  // namespace mana::emu
