// SPDX-License-Identifier: BSD-3-Clause
#include "config/vmbus_tree.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "config/fs_util.h"

namespace mana::emu {

namespace {

// The network device class (Linux HV_NIC_GUID, DPDK's vmbus_nic_uuid).
constexpr char kNicClass[] = "f8615163-df3e-46c5-913f-f2d2f965ed0e";
constexpr uint32_t kFirstRelid = 14;       // after the VMBus's own devices, as on Azure VMs
constexpr uint32_t kRelidsPerNic = 64;     // primary + up to 63 subchannels
constexpr uint32_t kFirstGpadl = 0xe1e10;  // an arbitrary non-zero handle space

const char* const kMapNames[kVmbusMaps] = {"txrx_rings", "int_page", "monitor_page", "recv",
                                           "send"};

std::string hex_size(uint64_t size) {
  char text[32];
  snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(size));
  return text;
}

// A zero-filled (sparse) file of `size` bytes, created under a temporary name and renamed, so a
// reader never sees it shorter.
bool sized_file(const std::string& path, uint64_t size, std::string* error) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
    *error = "cannot create " + tmp + ": " + strerror(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + ": " + strerror(errno);
    return false;
  }
  return true;
}

bool write_line(const std::string& path, const std::string& line, std::string* error) {
  return write_file(path, line + "\n", error);
}

std::string device_dir(const std::string& root, const std::string& uuid) {
  return vmbus_devices_dir(root) + "/" + uuid;
}

// What every VMBus device shows (drivers/hv/vmbus_drv.c).
bool write_device_ids(const std::string& dir, const std::string& uuid, uint32_t relid,
                      uint32_t monitor_id, std::string* error) {
  return make_dirs(dir, error) &&
         write_line(dir + "/class_id", std::string("{") + kNicClass + "}", error) &&
         write_line(dir + "/device_id", "{" + uuid + "}", error) &&
         write_line(dir + "/id", std::to_string(relid), error) &&
         write_line(dir + "/monitor_id", std::to_string(monitor_id), error) &&
         write_line(dir + "/numa_node", "0", error);
}

bool write_uio_device(const std::string& root, const SyntheticNic& nic, std::string* error) {
  const std::string dev = device_dir(root, nic.uuid);
  const std::string drivers = root + "/sys/bus/vmbus/drivers/uio_hv_generic";
  if (!write_device_ids(dev, nic.uuid, nic.relid, nic.monitor_id, error) ||
      !make_dirs(drivers, error) || !make_symlink(drivers, dev + "/driver", error) ||
      !make_dirs(root + "/dev", error) || !make_dirs(root + "/vmbus", error) ||
      !make_dirs(vmbus_channel_dir(root, nic, 0), error)) {
    return false;
  }
  const std::string uio = dev + "/uio/uio" + std::to_string(nic.index);
  if (!make_dirs(uio, error) && !write_line(uio + "/name", "uio_hv_generic", error)) return false;
  for (unsigned i = 0; i < kVmbusMaps; ++i) {
    std::string name = kMapNames[i];
    if (i == 3) name += ":" + std::to_string(nic.recv_gpadl);
    if (i == 4) name += ":" + std::to_string(nic.send_gpadl);
    const std::string map = uio + "/maps/map" + std::to_string(i);
    if (!make_dirs(map, error) || !write_line(map + "/name", name, error) ||
        !write_line(map + "/size", hex_size(vmbus_map_size(i)), error) ||
        !write_line(map + "/offset", "0x0", error) ||
        !sized_file(vmbus_map_file(root, nic, i), vmbus_map_size(i), error)) {
      return false;
    }
  }
  const std::string primary = vmbus_channel_dir(root, nic, 0);
  return write_line(primary + "/subchannel_id", "0", error) &&
         write_line(primary + "/monitor_id", std::to_string(nic.monitor_id), error) &&
         write_file(uio_stand_in(root, nic.index), "", error);
}

}  // namespace

std::string vmbus_device_uuid(uint32_t vf, uint32_t port) {
  char uuid[64];
  snprintf(uuid, sizeof(uuid), "f8615163-0000-1000-8000-%04x%08x", vf, port);
  return uuid;
}

std::vector<SyntheticNic> synthetic_nics(const EmuConfig& config) {
  std::vector<SyntheticNic> nics;
  uint32_t devices = 0;  // VMBus devices of either kind, for their relids
  for (uint32_t vf = 0; vf < config.vfs.size(); ++vf) {
    for (uint32_t p = 0; p < config.vfs[vf].ports.size(); ++p) {
      const PortConfig& port = config.vfs[vf].ports[p];
      if (port.netvsc.empty() && !port.uio_netvsc) continue;
      const uint32_t device = devices++;
      if (!port.uio_netvsc) continue;
      SyntheticNic nic;
      nic.vf = vf;
      nic.port = p;
      nic.index = static_cast<uint32_t>(nics.size());
      nic.uuid = vmbus_device_uuid(vf, p);
      nic.relid = kFirstRelid + device * kRelidsPerNic;
      nic.monitor_id = nic.index % 128;  // DPDK needs < 128 for the primary channel
      nic.recv_gpadl = kFirstGpadl + 2 * nic.index;
      nic.send_gpadl = nic.recv_gpadl + 1;
      nics.push_back(nic);
    }
  }
  return nics;
}

std::string vmbus_devices_dir(const std::string& root) { return root + "/sys/bus/vmbus/devices"; }

std::string uio_stand_in(const std::string& root, uint32_t index) {
  return root + "/dev/uio" + std::to_string(index);
}

std::string vmbus_channel_dir(const std::string& root, const SyntheticNic& nic, unsigned sub) {
  return device_dir(root, nic.uuid) + "/channels/" + std::to_string(nic.relid + sub);
}

std::string vmbus_map_file(const std::string& root, const SyntheticNic& nic, unsigned map) {
  if (map == 0) return vmbus_channel_dir(root, nic, 0) + "/ring";
  return root + "/vmbus/uio" + std::to_string(nic.index) + "." + kMapNames[map];
}

uint64_t vmbus_map_size(unsigned map) {
  switch (map) {
    case 0:
      return 2 * kVmbusRingBytes;
    case 3:
      return kVmbusRecvBufferBytes;
    case 4:
      return kVmbusSendBufferBytes;
    default:
      return 4096;
  }
}

bool write_vmbus_tree(const EmuConfig& config, std::string* error) {
  // Devices bound to hv_netvsc (sysfs_tree.cpp adds their driver and netdev): the ids only.
  uint32_t device = 0;
  for (uint32_t vf = 0; vf < config.vfs.size(); ++vf) {
    for (uint32_t p = 0; p < config.vfs[vf].ports.size(); ++p) {
      const PortConfig& port = config.vfs[vf].ports[p];
      if (port.netvsc.empty() && !port.uio_netvsc) continue;
      const uint32_t relid = kFirstRelid + device++ * kRelidsPerNic;
      const std::string uuid = vmbus_device_uuid(vf, p);
      if (!port.netvsc.empty() &&
          !write_device_ids(device_dir(config.root, uuid), uuid, relid, relid % 128, error))
        return false;
    }
  }
  for (const SyntheticNic& nic : synthetic_nics(config))
    if (!write_uio_device(config.root, nic, error)) return false;
  return true;
}

std::string offer_vmbus_subchannel(const std::string& root, const SyntheticNic& nic, unsigned sub,
                                   std::string* error) {
  const std::string dir = vmbus_channel_dir(root, nic, sub);
  std::string ring = dir + "/ring";
  if (!make_dirs(dir, error) || !write_line(dir + "/subchannel_id", std::to_string(sub), error) ||
      !write_line(dir + "/monitor_id", std::to_string((nic.monitor_id + sub) % 128), error) ||
      !sized_file(ring, vmbus_map_size(0), error)) {
    return {};
  }
  return ring;
}

void remove_vmbus_subchannels(const std::string& root, const SyntheticNic& nic) {
  std::string ignored;
  for (unsigned sub = 1; sub <= kVmbusMaxSubchannels; ++sub)
    remove_tree(vmbus_channel_dir(root, nic, sub), &ignored);
}

}  // namespace mana::emu
