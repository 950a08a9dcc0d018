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

alignas(4096) volatile uint64_t static_page[512];
void static_page_write(uint64_t value) { static_page[0x101] = value; }
void static_page_write_constant() { static_page[0x100] = 0x12345678; }

#if defined(__x86_64__)
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
#elif defined(__aarch64__)
void write64_zero(volatile void* addr) { *static_cast<volatile uint64_t*>(addr) = 0; }
void write_double(volatile double* addr, double value) { *addr = value; }
void write_float(volatile float* addr, float value) { *addr = value; }

void neon_lane0_u64(uint64_t* addr, uint64x2_t value) { vst1q_lane_u64(addr, value, 0); }
void neon_lane1_u64(uint64_t* addr, uint64x2_t value) { vst1q_lane_u64(addr, value, 1); }
void neon_lane2_u32(uint32_t* addr, uint32x4_t value) { vst1q_lane_u32(addr, value, 2); }

uint64_t* asm_str_pre(uint64_t* base, uint64_t value) {
  asm volatile("str %x[v], [%x[b], #8]!" : [b] "+r"(base) : [v] "r"(value) : "memory");
  return base;
}
uint64_t* asm_str_post(uint64_t* base, uint64_t value) {
  asm volatile("str %x[v], [%x[b]], #16" : [b] "+r"(base) : [v] "r"(value) : "memory");
  return base;
}
void asm_stur(uint32_t* addr, uint32_t value) {
  asm volatile("stur %w[v], [%x[a], #-4]" : : [a] "r"(addr), [v] "r"(value) : "memory");
}
void asm_stp_w(uint32_t* addr, uint32_t lo, uint32_t hi) {
  asm volatile("stp %w[lo], %w[hi], [%x[a], #8]"
               :
               : [a] "r"(addr), [lo] "r"(lo), [hi] "r"(hi)
               : "memory");
}
uint32_t* asm_stp_w_pre(uint32_t* base, uint32_t lo, uint32_t hi) {
  asm volatile("stp %w[lo], %w[hi], [%x[b], #-8]!"
               : [b] "+r"(base)
               : [lo] "r"(lo), [hi] "r"(hi)
               : "memory");
  return base;
}
void asm_stlr_w(uint32_t* addr, uint32_t value) {
  asm volatile("stlr %w[v], [%x[a]]" : : [a] "r"(addr), [v] "r"(value) : "memory");
}
double* asm_str_d_pre(double* base, double value) {
  asm volatile("str %d[v], [%x[b], #8]!" : [b] "+r"(base) : [v] "w"(value) : "memory");
  return base;
}
double* asm_str_d_post(double* base, double value) {
  asm volatile("str %d[v], [%x[b]], #-8" : [b] "+r"(base) : [v] "w"(value) : "memory");
  return base;
}
// What libgcc's __aarch64_swp8_acq_rel runs on a CPU without LSE.
uint64_t asm_exclusive_exchange(uint64_t* addr, uint64_t value) {
  uint64_t old;
  uint32_t status;
  asm volatile(
      "1: ldaxr %x[old], [%x[a]]\n"
      "   stlxr %w[status], %x[v], [%x[a]]\n"
      "   cbnz %w[status], 1b"
      : [old] "=&r"(old), [status] "=&r"(status)
      : [a] "r"(addr), [v] "r"(value)
      : "memory");
  return old;
}
// Encoded by hand (.inst) with fixed registers: no -march option needed to assemble them.
uint64_t asm_swpal(uint64_t* addr, uint64_t value) {
  register uint64_t* x0 asm("x0") = addr;
  register uint64_t x1 asm("x1") = value;
  register uint64_t x2 asm("x2");
  asm volatile(".inst 0xf8e18002  // swpal x1, x2, [x0]" : "=r"(x2) : "r"(x0), "r"(x1) : "memory");
  return x2;
}
void asm_stlur(uint64_t* addr, uint64_t value) {
  register uint64_t* x0 asm("x0") = addr;
  register uint64_t x1 asm("x1") = value;
  asm volatile(".inst 0xd91f8001  // stlur x1, [x0, #-8]" : : "r"(x0), "r"(x1) : "memory");
}
#endif

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
    static_page,
    static_page_write,
    static_page_write_constant,
#if defined(__x86_64__)
    sse_storel_epi64,
    sse_storeu_si32,
    sse_stream_si64,
    sse_stream_si32,
    sse_store_sd,
    sse_storel_pd,
    sse_storeh_pd,
    avx_storel_epi64,
    avx_store_sd,
#elif defined(__aarch64__)
    write64_zero,
    write_double,
    write_float,
    neon_lane0_u64,
    neon_lane1_u64,
    neon_lane2_u32,
    asm_str_pre,
    asm_str_post,
    asm_stur,
    asm_stp_w,
    asm_stp_w_pre,
    asm_stlr_w,
    asm_str_d_pre,
    asm_str_d_post,
    asm_exclusive_exchange,
    asm_swpal,
    asm_stlur,
#endif
};

}  // namespace mana::emu::doorbell::testing
