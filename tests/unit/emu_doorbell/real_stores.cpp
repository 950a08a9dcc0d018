// SPDX-License-Identifier: BSD-3-Clause
// Built twice (see meson.build): REAL_STORES_NAME names the table, the target's optimization level
// decides the code.
#include "real_stores.h"

namespace mana::emu::doorbell::testing {
namespace {

void write64(volatile void* addr, uint64_t value) {
  *static_cast<volatile uint64_t*>(addr) = value;
}
void write32(volatile void* addr, uint32_t value) {
  *static_cast<volatile uint32_t*>(addr) = value;
}
void write16(volatile void* addr, uint16_t value) {
  *static_cast<volatile uint16_t*>(addr) = value;
}
void write8(volatile void* addr, uint8_t value) { *static_cast<volatile uint8_t*>(addr) = value; }
void write64_indexed(volatile uint64_t* page, uint32_t index, uint64_t value) {
  page[index] = value;
}
void write64_small_constant(volatile void* addr) {
  *static_cast<volatile uint64_t*>(addr) = 0x12345678;
}
void write64_large_constant(volatile void* addr) {
  *static_cast<volatile uint64_t*>(addr) = 0xFFFFFFFF00123456ull;
}
void write32_constant(volatile void* addr) { *static_cast<volatile uint32_t*>(addr) = 0x80012345u; }

void atomic_relaxed(uint64_t* addr, uint64_t value) {
  __atomic_store_n(addr, value, __ATOMIC_RELAXED);
}
void atomic_release(uint64_t* addr, uint64_t value) {
  __atomic_store_n(addr, value, __ATOMIC_RELEASE);
}
void atomic_seq_cst(uint64_t* addr, uint64_t value) {
  __atomic_store_n(addr, value, __ATOMIC_SEQ_CST);
}
uint64_t atomic_exchange(uint64_t* addr, uint64_t value) {
  return __atomic_exchange_n(addr, value, __ATOMIC_SEQ_CST);
}

void sse_storel_epi64(void* addr, __m128i value) {
  _mm_storel_epi64(static_cast<__m128i*>(addr), value);
}
void sse_storeu_si32(void* addr, __m128i value) { _mm_storeu_si32(addr, value); }
void sse_stream_si64(long long* addr, long long value) { _mm_stream_si64(addr, value); }
void sse_stream_si32(int* addr, int value) { _mm_stream_si32(addr, value); }
void sse_store_sd(double* addr, __m128d value) { _mm_store_sd(addr, value); }
void sse_storel_pd(double* addr, __m128d value) { _mm_storel_pd(addr, value); }
void sse_storeh_pd(double* addr, __m128d value) { _mm_storeh_pd(addr, value); }

__attribute__((target("avx"))) void avx_storel_epi64(void* addr, __m128i value) {
  _mm_storel_epi64(static_cast<__m128i*>(addr), value);
}
__attribute__((target("avx"))) void avx_store_sd(double* addr, __m128d value) {
  _mm_store_sd(addr, value);
}

alignas(4096) volatile uint64_t static_page[512];
void static_page_write(uint64_t value) { static_page[0x101] = value; }
void static_page_write_constant() { static_page[0x100] = 0x12345678; }

}  // namespace

extern const RealStores REAL_STORES_NAME = {
    REAL_STORES_OPTIMIZATION,
    write64,
    write32,
    write16,
    write8,
    write64_indexed,
    write64_small_constant,
    write64_large_constant,
    write32_constant,
    atomic_relaxed,
    atomic_release,
    atomic_seq_cst,
    atomic_exchange,
    sse_storel_epi64,
    sse_storeu_si32,
    sse_stream_si64,
    sse_stream_si32,
    sse_store_sd,
    sse_storel_pd,
    sse_storeh_pd,
    avx_storel_epi64,
    avx_store_sd,
    static_page,
    static_page_write,
    static_page_write_constant,
};

}  // namespace mana::emu::doorbell::testing
