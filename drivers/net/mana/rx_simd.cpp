// SPDX-License-Identifier: BSD-3-Clause
// Which RX implementation a process runs (burst.h RxSimd): the vector kernel of its CPU unless the
// EAL's --force-max-simd-bitwidth is below 128, the scalar path otherwise. Asked at dev_start, so
// that the choice costs nothing per packet.
#include <rte_cpuflags.h>
#include <rte_vect.h>

#include "burst.h"

namespace mana {

bool rx_simd_supported(RxSimd s) {
  switch (s) {
    case RxSimd::kScalar:
      return true;
#if defined(__x86_64__)
    case RxSimd::kSse41:
      return rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
    case RxSimd::kAvx2:
      return rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0;
#elif defined(__aarch64__)
    case RxSimd::kNeon:
      return rte_cpu_get_flag_enabled(RTE_CPUFLAG_NEON) > 0;
#endif
    default:
      return false;
  }
}

RxSimd rx_simd_best() {
  const uint16_t width = rte_vect_get_max_simd_bitwidth();
  if (width >= RTE_VECT_SIMD_256 && rx_simd_supported(RxSimd::kAvx2)) return RxSimd::kAvx2;
  if (width >= RTE_VECT_SIMD_128 && rx_simd_supported(RxSimd::kSse41)) return RxSimd::kSse41;
  if (width >= RTE_VECT_SIMD_128 && rx_simd_supported(RxSimd::kNeon)) return RxSimd::kNeon;
  return RxSimd::kScalar;
}

const char* rx_simd_name(RxSimd s) {
  switch (s) {
    case RxSimd::kSse41:
      return "Vector SSE4.1";
    case RxSimd::kAvx2:
      return "Vector AVX2";
    case RxSimd::kNeon:
      return "Vector Neon";
    default:
      return "Scalar";
  }
}

}  // namespace mana
