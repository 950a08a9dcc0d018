// SPDX-License-Identifier: BSD-3-Clause
// Without MANA_EMU_CONFIG the preloaded library is passive: every call reaches the real rdma-core.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <infiniband/manadv.h>
#include <infiniband/verbs.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::vector<std::string> names(ibv_device** list, int n) {
  std::vector<std::string> out;
  for (int i = 0; list != nullptr && i < n; ++i) out.emplace_back(list[i]->name);
  return out;
}

// doc/emulator.md "Lockstep": the step function is there for dlsym, and refuses to run outside
// lockstep mode (here: no emulated VF at all).
TEST(ForwardPassive, StepFunctionIsExportedAndRefuses) {
  using Step = int (*)();
  auto step = reinterpret_cast<Step>(dlsym(RTLD_DEFAULT, "mana_emu_step"));
  ASSERT_NE(step, nullptr) << "libmana_emu.so does not export mana_emu_step";
  EXPECT_EQ(step(), -1);
}

TEST(ForwardPassive, DeviceListIsTheRealOne) {
  ASSERT_EQ(getenv("MANA_EMU_CONFIG"), nullptr);
  void* real_lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(real_lib, nullptr);
  using GetList = ibv_device** (*)(int*);
  using FreeList = void (*)(ibv_device**);
  auto real_get = reinterpret_cast<GetList>(dlvsym(real_lib, "ibv_get_device_list", "IBVERBS_1.1"));
  auto real_free =
      reinterpret_cast<FreeList>(dlvsym(real_lib, "ibv_free_device_list", "IBVERBS_1.1"));
  ASSERT_NE(real_get, nullptr);
  ASSERT_NE(reinterpret_cast<void*>(real_get), dlsym(RTLD_DEFAULT, "ibv_get_device_list"))
      << "the test must call the interposed function";
  int n_real = -1, n = -1;
  ibv_device** real = real_get(&n_real);
  const int real_errno = errno;
  ibv_device** ours = ibv_get_device_list(&n);
  EXPECT_EQ(ours == nullptr, real == nullptr);
  if (ours == nullptr) {
    EXPECT_EQ(errno, real_errno);
  } else {
    EXPECT_EQ(n, n_real);
    EXPECT_EQ(names(ours, n), names(real, n_real));
    for (const std::string& name : names(ours, n))
      EXPECT_EQ(name.rfind("mana_", 0), std::string::npos);
    ibv_free_device_list(ours);
  }
  if (real != nullptr) real_free(real);
  dlclose(real_lib);
}

TEST(ForwardPassive, ManadvCallsReachLibmana) {
  // libmana's own checks answer: unknown object bits are EINVAL before any object is touched.
  manadv_obj obj{};
  EXPECT_EQ(manadv_init_obj(&obj, 8), EINVAL);
}

}  // namespace
