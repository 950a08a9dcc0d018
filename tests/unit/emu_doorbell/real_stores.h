// SPDX-License-Identifier: BSD-3-Clause
// Stores as real code writes them into a doorbell page, compiled by the compiler under test at -O0
// and at -O2 (real_stores.cpp is built twice, and twice more by clang when it is installed), so the
// trap meets the instructions the compilers emit. x86-64 and AArch64 share the plain C++ stores
// and each has its own: SSE/AVX intrinsics, or NEON lane stores and inline assembly.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <cstdint>

namespace mana::emu::doorbell::testing {

struct RealStores {
  const char* optimization;
  // DPDK's rte_write64_relaxed/rte_write32_relaxed...: a volatile store.
  void (*write64)(volatile void* addr, uint64_t value);
  void (*write32)(volatile void* addr, uint32_t value);
  void (*write16)(volatile void* addr, uint16_t value);
  void (*write8)(volatile void* addr, uint8_t value);
  void (*write64_indexed)(volatile uint64_t* page, uint32_t index, uint64_t value);
  void (*write64_small_constant)(volatile void* addr);  // 0x12345678: mov $imm32
  void (*write64_large_constant)(volatile void* addr);  // 0xFFFFFFFF00123456
  void (*write32_constant)(volatile void* addr);        // 0x80012345
  // __atomic_store_n / __atomic_exchange_n
  void (*atomic_relaxed)(uint64_t* addr, uint64_t value);
  void (*atomic_release)(uint64_t* addr, uint64_t value);
  void (*atomic_seq_cst)(uint64_t* addr, uint64_t value);
  uint64_t (*atomic_exchange)(uint64_t* addr, uint64_t value);
  // A page-aligned static page of this translation unit: stores into it are RIP-relative (x86),
  // or addressed by adrp (AArch64).
  volatile uint64_t* static_page;
  void (*static_page_write)(uint64_t value);  // static_page[0x101] = value
  void (*static_page_write_constant)();       // static_page[0x100] = 0x12345678
#if defined(__x86_64__)
  // SSE intrinsics
  void (*sse_storel_epi64)(void* addr, __m128i value);  // movq m64, xmm
  void (*sse_storeu_si32)(void* addr, __m128i value);   // movd m32, xmm
  void (*sse_stream_si64)(long long* addr, long long value);
  void (*sse_stream_si32)(int* addr, int value);
  void (*sse_store_sd)(double* addr, __m128d value);
  void (*sse_storel_pd)(double* addr, __m128d value);
  void (*sse_storeh_pd)(double* addr, __m128d value);
  // AVX (VEX-encoded): call only when the CPU has AVX
  void (*avx_storel_epi64)(void* addr, __m128i value);
  void (*avx_store_sd)(double* addr, __m128d value);
#elif defined(__aarch64__)
  void (*write64_zero)(volatile void* addr);                  // str xzr
  void (*write_double)(volatile double* addr, double value);  // str d
  void (*write_float)(volatile float* addr, float value);     // str s
  // NEON lane stores (vst1q_lane_*): lane 0 is str d, the others st1 of one lane
  void (*neon_lane0_u64)(uint64_t* addr, uint64x2_t value);
  void (*neon_lane1_u64)(uint64_t* addr, uint64x2_t value);
  void (*neon_lane2_u32)(uint32_t* addr, uint32x4_t value);
  // Inline assembly, as DPDK's rte_write* and hand-written code store: the writeback forms return
  // the new base
  uint64_t* (*asm_str_pre)(uint64_t* base, uint64_t value);              // str x, [base, #8]!
  uint64_t* (*asm_str_post)(uint64_t* base, uint64_t value);             // str x, [base], #16
  void (*asm_stur)(uint32_t* addr, uint32_t value);                      // stur w, [addr, #-4]
  void (*asm_stp_w)(uint32_t* addr, uint32_t lo, uint32_t hi);           // stp w, w, [addr, #8]
  uint32_t* (*asm_stp_w_pre)(uint32_t* base, uint32_t lo, uint32_t hi);  // stp w, w, [base, #-8]!
  void (*asm_stlr_w)(uint32_t* addr, uint32_t value);                    // stlr w
  double* (*asm_str_d_pre)(double* base, double value);                  // str d, [base, #8]!
  double* (*asm_str_d_post)(double* base, double value);                 // str d, [base], #-8
  uint64_t (*asm_exclusive_exchange)(uint64_t* addr, uint64_t value);    // ldaxr/stlxr loop
  uint64_t (*asm_swpal)(uint64_t* addr, uint64_t value);  // FEAT_LSE: call only when present
  void (*asm_stlur)(uint64_t* addr, uint64_t value);      // stlur x, [addr, #-8]: FEAT_LRCPC2
#endif
};

extern const RealStores kRealStoresO0;
extern const RealStores kRealStoresO2;
#ifdef HAVE_CLANG_REAL_STORES
extern const RealStores kRealStoresClangO0;
extern const RealStores kRealStoresClangO2;
#endif

}  // namespace mana::emu::doorbell::testing
