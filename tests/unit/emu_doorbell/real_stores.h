// SPDX-License-Identifier: BSD-3-Clause
// Stores as real code writes them into a doorbell page, compiled by the compiler under test at -O0
// and at -O2 (real_stores.cpp is built twice, and twice more by clang when it is installed), so the
// trap meets the instructions the compilers emit.
#pragma once

#include <immintrin.h>

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
  // A page-aligned static page of this translation unit: stores into it are RIP-relative.
  volatile uint64_t* static_page;
  void (*static_page_write)(uint64_t value);  // static_page[0x101] = value
  void (*static_page_write_constant)();       // static_page[0x100] = 0x12345678
};

extern const RealStores kRealStoresO0;
extern const RealStores kRealStoresO2;
#ifdef HAVE_CLANG_REAL_STORES
extern const RealStores kRealStoresClangO0;
extern const RealStores kRealStoresClangO2;
#endif

}  // namespace mana::emu::doorbell::testing
