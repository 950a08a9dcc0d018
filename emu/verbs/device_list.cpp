// SPDX-License-Identifier: BSD-3-Clause
// ibv_get_device_list and friends: the emulated devices (those not hot-removed) first, then the
// real ones.
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>

#include "verbs/exports.h"
#include "verbs/real_verbs.h"
#include "verbs/runtime.h"

using namespace mana::emu::verbs;

namespace {

// Stored in ibv_device::_ops (unused by rdma-core's own devices) to recognise ours.
ibv_context* device_marker(ibv_device*, int) { return nullptr; }

// Our list array -> the real list it includes (freed with it).
std::map<ibv_device**, ibv_device**>& real_lists() {
  static auto* lists = new std::map<ibv_device**, ibv_device**>();
  return *lists;
}

ibv_device** real_get_device_list(int* num) {
  static const auto real =
      next_symbol<decltype(&ibv_get_device_list)>("ibv_get_device_list", kIbverbs11);
  if (real == nullptr) return errno = ENOSYS, nullptr;
  return real(num);
}

void real_free_device_list(ibv_device** list) {
  static const auto real =
      next_symbol<decltype(&ibv_free_device_list)>("ibv_free_device_list", kIbverbs11);
  if (real != nullptr) real(list);
}

}  // namespace

namespace mana::emu::verbs {
bool is_emu_device(const ibv_device* dev) {
  return dev != nullptr && dev->_ops._dummy1 == &device_marker;
}
}  // namespace mana::emu::verbs

MANA_EMU_EXPORT ibv_device** ibv_get_device_list(int* num_devices) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return real_get_device_list(num_devices);
  latch_disassociate_destroy();
  int real_count = 0;
  const int saved_errno = errno;
  ibv_device** real = real_get_device_list(&real_count);  // none (or no RDMA at all) is fine
  if (real == nullptr) real_count = 0;
  errno = saved_errno;

  std::lock_guard<std::mutex> guard(rt->lock());
  std::vector<ibv_device*> listed;
  for (EmuDevice* dev : rt->devices()) {
    dev->ibv._ops._dummy1 = &device_marker;
    if (rt->vf_listed(dev->vf)) listed.push_back(&dev->ibv);
  }
  for (int i = 0; i < real_count; ++i) listed.push_back(real[i]);
  auto** list = static_cast<ibv_device**>(calloc(listed.size() + 1, sizeof(ibv_device*)));
  if (list == nullptr) {
    if (real != nullptr) real_free_device_list(real);
    return errno = ENOMEM, nullptr;
  }
  for (size_t i = 0; i < listed.size(); ++i) list[i] = listed[i];
  real_lists()[list] = real;
  if (num_devices != nullptr) *num_devices = static_cast<int>(listed.size());
  return list;
}

MANA_EMU_EXPORT void ibv_free_device_list(ibv_device** list) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return real_free_device_list(list);
  ibv_device** real = nullptr;
  {
    std::lock_guard<std::mutex> guard(rt->lock());
    auto it = real_lists().find(list);
    if (it == real_lists().end()) {
      real_free_device_list(list);  // a list the real library made (before we were active)
      return;
    }
    real = it->second;
    real_lists().erase(it);
  }
  if (real != nullptr) real_free_device_list(real);
  free(list);
}

MANA_EMU_EXPORT const char* ibv_get_device_name(ibv_device* device) {
  if (is_emu_device(device)) return device->name;
  static const auto real =
      next_symbol<decltype(&ibv_get_device_name)>("ibv_get_device_name", kIbverbs11);
  return real == nullptr ? nullptr : real(device);
}

MANA_EMU_EXPORT __be64 ibv_get_device_guid(ibv_device* device) {
  if (is_emu_device(device)) {
    // A stable GUID from the VF index and the device's position (ours are never compared).
    const EmuDevice* dev = emu(device);
    return htobe64(0x00155dfffe000000ull | (uint64_t{dev->vf} << 8) | dev->vendor_part_id);
  }
  static const auto real =
      next_symbol<decltype(&ibv_get_device_guid)>("ibv_get_device_guid", kIbverbs11);
  return real == nullptr ? 0 : real(device);
}
